package yamlutil_test

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{
		"a: 1\n",
		"a: &m {x: 1}\nb: *m\nc: *m\n",           // used twice, no cycle
		"a: &m {x: &n [1]}\nb: {y: *n, z: *m}\n", // nested anchors
		"a: &m {n: *m\n",                         // not YAML: the reader's problem
		"x: '&*'\n",                              // looks like it
	} {
		assert.NoError(t, yamlutil.Check([]byte(ok)), "%q", ok)
	}
	for _, bad := range []string{
		"a: &m {n: *m}\n",
		"a: &m [1, [*m]]\n",
		"x: 1\n---\na: &m {b: {c: &n {d: *m}}}\n",
		"a: &m {b: &n {c: *n}}\n",
	} {
		err := yamlutil.Check([]byte(bad))
		assert.ErrorContains(t, err, "is inside the node its anchor names", "%q", bad)
	}
	assert.ErrorContains(t, yamlutil.Check([]byte("x: 1\n---\na: &m {b: {c: &n {d: *m}}}\n")), "line 3: alias *m")
}

// TestErrorLine: the line of a go.yaml.in/yaml/v3 error, counted from 1,
// whichever way the library counted it in its message: a parser error's
// from 0, a scanner error's from 1, none at all on the first line.
func TestDocuments(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // each document's first key, or "" for an empty one
		wantErr bool
	}{
		{name: "none", in: ""},
		{name: "one", in: "a: 1\n", want: []string{"a"}},
		{name: "several, an empty one among them", in: "a: 1\n---\n---\nb: 2\n", want: []string{"a", "", "b"}},
		{name: "an error ends them", in: "a: 1\n---\nb: [\n---\nc: 3\n", want: []string{"a"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var gotErr error
			for doc, err := range yamlutil.Documents(strings.NewReader(tt.in)) {
				if err != nil {
					require.NoError(t, gotErr, "one error at most")
					gotErr = err
					continue
				}
				require.NoError(t, gotErr, "no document after the error")
				key := ""
				if len(doc.Content) > 0 && len(doc.Content[0].Content) > 0 {
					key = doc.Content[0].Content[0].Value
				}
				got = append(got, key)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantErr, gotErr != nil, "error: %v", gotErr)
		})
	}
}

func TestDocumentsStopsWhenAsked(t *testing.T) {
	n := 0
	for range yamlutil.Documents(strings.NewReader("a: 1\n---\nb: 2\n")) {
		n++
		break
	}
	assert.Equal(t, 1, n)
}

func TestErrorLine(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int    // the line ErrorLine must give
		lib        string // the library's message, to show what it counted
	}{
		{name: "parser error, the bad key on line 7",
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n bad: x\n",
			line: 7, lib: "yaml: line 6: did not find expected key"},
		{name: "parser error, the sequence it was parsing starts on line 7",
			yaml: "apiVersion: x\nkind: Stack\nmetadata: {name: demo}\nspec:\n  source: {url: u}\n  layers:\n    - name: crds\n     path: ./crds\n",
			line: 7, lib: "yaml: line 6: did not find expected '-' indicator"},
		{name: "parser error, an unclosed flow sequence opened on line 7",
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n  j: [a, b\n",
			line: 7, lib: "yaml: line 6: did not find expected ',' or ']'"},
		{name: "parser error, the second document's mapping starts on line 6",
			yaml: "a: 1\n---\nb: 2\n---\n\nc:\n  k: v\n bad: x\n",
			line: 6, lib: "yaml: line 5: did not find expected key"},
		{name: "parser error on line 2, the sequence on line 1",
			yaml: "- a\nb: c\n",
			line: 2, lib: "yaml: line 1: did not find expected '-' indicator"},
		{name: "parser error on line 2, the flow sequence on line 1",
			yaml: "[a, b\nc: d\n",
			line: 2, lib: "yaml: line 1: did not find expected ',' or ']'"},
		{name: "parser error on line 1",
			yaml: "]\n",
			line: 1, lib: "yaml: did not find expected node content"},
		{name: "scanner error on line 7",
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n  j: a: b\n",
			line: 7, lib: "yaml: line 7: mapping values are not allowed in this context"},
		{name: "scanner error on line 1",
			yaml: "a: b: c\n",
			line: 1, lib: "yaml: mapping values are not allowed in this context"},
		{name: "scanner error, a tab on line 2",
			yaml: "a:\n\tb: 1\n",
			line: 2, lib: "yaml: line 2: found character that cannot start any token"},
		{name: "unmarshal error on line 3",
			yaml: "a: 1\nb: 2\nc: [x]\n",
			line: 3, lib: "yaml: unmarshal errors:\n  line 3: cannot unmarshal !!seq into string"},
		{name: "a control character: no line",
			yaml: "a: \x01\n",
			line: 0, lib: "yaml: control characters are not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := yaml.NewDecoder(strings.NewReader(tt.yaml))
			var err error
			for err == nil {
				if tt.lib != "" && strings.Contains(tt.lib, "unmarshal") {
					var v map[string]string
					err = dec.Decode(&v)
				} else {
					var n yaml.Node
					err = dec.Decode(&n)
				}
			}
			require.NotErrorIs(t, err, io.EOF, "%q decodes", tt.yaml)
			assert.Equal(t, tt.lib, err.Error(), "the library's message")
			assert.Equal(t, tt.line, yamlutil.ErrorLine(err), "ErrorLine(%q)", err)

			stripped := yamlutil.WithoutLine(err)
			require.ErrorIs(t, stripped, err)
			if strings.Contains(tt.lib, "\n") {
				assert.Equal(t, tt.lib, stripped.Error(), "unmarshal errors keep their lines")
			} else {
				assert.NotContains(t, stripped.Error(), "line ", "WithoutLine(%q)", err)
				assert.True(t, strings.HasPrefix(stripped.Error(), "yaml: "), "WithoutLine(%q) = %q", err, stripped)
			}
		})
	}

	// ErrorLineIn names the bad token's line where the message names its
	// collection's, and keeps the line in the data.
	for _, tt := range []struct {
		name, yaml string
		line       int
	}{
		{name: "a layer item's second line out of place on line 8",
			yaml: "apiVersion: x\nkind: Stack\nmetadata: {name: demo}\nspec:\n  source: {url: u}\n  layers:\n    - name: crds\n     path: ./crds\n",
			line: 8},
		{name: "a nested mapping's key out of place on line 4",
			yaml: "a:\n  b:\n    c: 1\n   d: 2\n", line: 4},
		{name: "the second document's key out of place on line 8",
			yaml: "a: 1\n---\nb: 2\n---\n\nc:\n  k: v\n bad: x\n", line: 8},
		{name: "a key out of place on line 7",
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n bad: x\n", line: 7},
		{name: "a flow mapping opened on line 3, not closed",
			yaml: "apiVersion: x\nkind: Stack\nmetadata: {name: platform\nspec:\n  layers: []\n", line: 3},
		{name: "a flow sequence opened on line 1, never closed",
			yaml: "a: [b\n", line: 1},
		{name: "the same without the last newline",
			yaml: "a: [b", line: 1},
		{name: "a scanner error on line 2",
			yaml: "a: 1\nb: c: d\n", line: 2},
	} {
		dec := yaml.NewDecoder(strings.NewReader(tt.yaml))
		var err error
		for err == nil {
			var n yaml.Node
			err = dec.Decode(&n)
		}
		require.NotErrorIs(t, err, io.EOF, "%s: %q decodes", tt.name, tt.yaml)
		assert.Equal(t, tt.line, yamlutil.ErrorLineIn([]byte(tt.yaml), err), "%s: ErrorLineIn(%q)", tt.name, err)
	}

	// sigs.k8s.io/yaml (go.yaml.in/yaml/v2) counts the same way, and names
	// the bad token's line rather than its collection's.
	var v map[string]any
	err := sigyaml.Unmarshal([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: y\n bad: x\n"), &v)
	require.Error(t, err)
	assert.Equal(t, "error converting YAML to JSON: yaml: line 6: did not find expected key", err.Error())
	assert.Equal(t, 7, yamlutil.ErrorLine(err))
	assert.Equal(t, "error converting YAML to JSON: yaml: did not find expected key", yamlutil.WithoutLine(err).Error())
}
