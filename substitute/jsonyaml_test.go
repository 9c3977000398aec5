package substitute

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// FuzzObjectYAML holds Preview's JSON-free steps to the ones they stand
// for: yamlutil.ObjectYAML to sigs.k8s.io/yaml's Marshal on what yaml.v3 decodes from
// a manifest, and decodeObject to unstructured.UnmarshalJSON (after Flux's
// float64 read-back when readBack).
func FuzzObjectYAML(f *testing.F) {
	f.Add("kind: ConfigMap\nmetadata: {name: a, labels: {b: '1'}}\ndata: {k: v}\n", false)
	f.Add("n: [1, -0, -0.0, 1.5, 1e3, 9007199254740993, 18446744073709551615, 1e20, 0x1F, 0o14, .inf]\n", true)
	f.Add("s: [yes, 'no', '~', null, 2001-12-14, \"\\x7f\", \"\\x85\", \"\\u2028\", \"\\ufffe\", '<<']\n", false)
	f.Add("'<<': {a: 1}\nb: {}\nc: []\nd: true\n", true)
	f.Add("a10: 1\na9: 2\n1: x\n", false)
	f.Fuzz(func(t *testing.T, manifest string, readBack bool) {
		if len(manifest) > 1000 {
			return
		}
		m := map[string]any{}
		if yaml.Unmarshal([]byte(manifest), &m) != nil {
			return
		}
		same := func(what string, obj map[string]any) {
			got, ok := yamlutil.ObjectYAML(obj)
			if !ok {
				return // the caller takes yamlutil.Marshal
			}
			want, err := sigyaml.Marshal(obj)
			require.NoError(t, err, "%s: ObjectYAML took what sigyaml.Marshal refuses", what)
			for i := 0; i < 50 && string(want) != string(got); i++ {
				want, _ = sigyaml.Marshal(obj) // sigyaml.v2's key order is not total
			}
			require.Equal(t, string(want), string(got), "%s of %q", what, manifest)
		}
		same("the decoded manifest", m)
		j, err := json.Marshal(m)
		if err != nil {
			return
		}
		ref := j
		if readBack {
			var back map[string]any
			require.NoError(t, json.Unmarshal(j, &back))
			ref, err = json.Marshal(back)
			require.NoError(t, err)
		}
		want := &unstructured.Unstructured{}
		wantErr := want.UnmarshalJSON(ref)
		got, ok := decodeObject(j, readBack)
		if !ok {
			return // plainObject says no, and Flux's steps are taken
		}
		if wantErr != nil {
			// unstructured refuses objects without a kind; the values must
			// still be what it makes of them with one.
			ref2 := strings.Replace(string(ref), "{", `{"kind":"X",`, 1)
			if _, hasKind := got["kind"]; hasKind || want.UnmarshalJSON([]byte(ref2)) != nil {
				return
			}
			got["kind"] = "X"
		}
		require.Equal(t, want.Object, got, "decodeObject of %s", j)
		same("the decoded JSON", got)
	})
}
