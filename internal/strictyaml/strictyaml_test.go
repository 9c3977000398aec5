package strictyaml_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/strictyaml"
)

type dep struct {
	Name string `json:"name"`
	Expr string `json:"expr,omitempty"`
}

type doc struct {
	Name     string           `json:"name"`
	Interval *metav1.Duration `json:"interval,omitempty"`
	Deps     []dep            `json:"deps,omitempty"`
	Force    bool             `json:"force,omitempty"`
}

var hooks = map[reflect.Type]strictyaml.Hook{
	strictyaml.DurationType: strictyaml.Duration,
	reflect.TypeFor[dep](): func(n *yaml.Node, _ string, _ func(string, ...any)) (any, bool) {
		if n.Kind != yaml.ScalarNode {
			return nil, false
		}
		return map[string]any{"name": n.Value}, true
	},
}

func decode(t *testing.T, src string) (*doc, error) {
	t.Helper()
	n, err := strictyaml.Document("f.yaml", []byte(src), "test")
	require.NoError(t, err)
	d := &strictyaml.Decoder{File: "f.yaml", Root: "the test", Hooks: hooks}
	var out doc
	d.Decode(n, &out)
	return &out, d.Err()
}

func TestDecode(t *testing.T) {
	got, err := decode(t, "name: a\ninterval: 5m\ndeps: [b, {name: c, expr: x}]\n")
	require.NoError(t, err)
	assert.Equal(t, "a", got.Name)
	assert.Equal(t, "5m0s", got.Interval.Duration.String())
	assert.Equal(t, []dep{{Name: "b"}, {Name: "c", Expr: "x"}}, got.Deps)
}

// Every problem is reported, each at its line.
func TestDecodeProblems(t *testing.T) {
	_, err := decode(t, "name: a\nnam: b\ninterval: -1m\nforce: yes\ndeps: {name: x}\n")
	require.Error(t, err)
	assert.Equal(t, `f.yaml:2: unknown field "nam" in the test (known: deps, force, interval, name)
f.yaml:3: interval: invalid duration "-1m": want a positive duration such as 10m
f.yaml:4: force: want true or false, got "yes"
f.yaml:5: deps: want a list`, err.Error())
}

func TestDocument(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"empty", "", "f.yaml: empty test file"},
		{"two documents", "a: 1\n---\nb: 2\n", "f.yaml:2: want one YAML document, found another"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strictyaml.Document("f.yaml", []byte(tt.src), "test")
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestLineOf(t *testing.T) {
	n, err := strictyaml.Document("f.yaml", []byte("a:\n  b:\n    - x\n    - y\n"), "test")
	require.NoError(t, err)
	assert.Equal(t, 4, strictyaml.LineOf(n, "a", "b", 1))
	assert.Equal(t, 3, strictyaml.LineOf(n, "a", "b", 5), "the list, the nearest node on the way")
}
