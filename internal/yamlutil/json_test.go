package yamlutil_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// libraryJSON is the route JSON must match: n decoded into a map, written
// by encoding/json.
func libraryJSON(n *yaml.Node) ([]byte, error) {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// jsonCases are documents JSON writes directly, and those next to them it
// must leave to the library, or write as it would.
var jsonCases = []string{
	"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  retryInterval: 1m\n  timeout: 5m\n  dependsOn: [{name: infra}]\n  postBuild:\n    substitute: {cluster: \"${CLUSTER}\", replicas: \"3\"}\n    substituteFrom:\n      - kind: ConfigMap\n        name: vars\n        optional: true\n",
	"b: 1\na: 2\nc: [3, -4, 0, -0, 007, +5, 0x10, 0o17, 1_000, 12345678901234567890, 123456789012345678]\n",
	"a: [true, false, True, FALSE, yes, no, on, off, y, n]\n",
	"a: [null, ~, Null, NULL, ]\nb:\nc: \"\"\n",
	"a: [1.5, .inf, -.Inf, .nan, 1e3, 1.0, 0.1, 2.]\n",
	"a: [2001-12-14, 2001-12-14t21:59:43.10-05:00, !!timestamp 2001-12-14]\n",
	"a: [!!str 1, !!int \"2\", !!binary aGVsbG8=, !!float 3, !custom x, ! y]\n",
	"a: ['1', \"true\", 'null', \"x\\ty\", \"<a&b>\", \"caf\\u00e9\", \"\\u2028\", \"\\x7f\", 'it''s', \"q\\\"uote\", back\\slash]\n",
	"é: 1\nz: 2\nA: 3\n\"\": 4\n\"b c\": 5\nB: 6\n",
	"a: b\na: c\n",
	"a: {b: c, b: d}\n",
	"1: a\n",
	"true: b\n",
	"a: {1: x}\n",
	"a: &x {b: c}\nd: *x\n",
	"a: &x [1]\nb: *x\n",
	"<<: {a: 1}\nb: 2\n",
	"a: {<<: {b: 1}, c: 2}\n",
	"a: [[], {}, [[]], {b: {}}]\n",
	"a: |\n  line one\n  line two\nb: >\n  folded\n  text\n",
	"Path: x\npath: y\n",
	"- a\n- b\n",
	"just a string\n",
	"",
}

func TestJSONIsTheLibrarys(t *testing.T) {
	for _, c := range jsonCases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c), &doc); err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		want, wantErr := libraryJSON(&doc)
		got, err := yamlutil.JSON(&doc)
		if wantErr != nil {
			assert.Error(t, err, "%q", c)
			continue
		}
		if assert.NoError(t, err, "%q", c) {
			assert.Equal(t, string(want), string(got), "%q", c)
		}
	}
}

// TestJSONOfEveryTestdataDocument holds JSON to the library on every
// document of the repository's test data (the shapes the fixtures model
// on public Flux repositories).
func TestJSONOfEveryTestdataDocument(t *testing.T) {
	var docs, same int
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(filepath.ToSlash(p), "/testdata/") || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				return nil // the end, or a file that is no YAML
			}
			want, wantErr := libraryJSON(&doc)
			got, err := yamlutil.JSON(&doc)
			docs++
			if wantErr != nil {
				assert.Error(t, err, "%s line %d", p, doc.Line)
				continue
			}
			if assert.NoError(t, err, "%s line %d", p, doc.Line) && assert.Equal(t, string(want), string(got), "%s line %d", p, doc.Line) {
				same++
			}
		}
	})
	require.NoError(t, err)
	require.Greater(t, docs, 500, "the test data this test reads")
	t.Logf("%d documents, %d the same", docs, same)
}
