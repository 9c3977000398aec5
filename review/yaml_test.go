package review

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"
)

// toYAML prints what sigs.k8s.io/yaml's Marshal prints, for every object
// ParseObjects makes of the review fixtures and of values YAML reads
// otherwise than JSON, and for those objects as a report shows them
// (secrets redacted, unchanged fields masked).
func TestToYAMLIsSigsYAML(t *testing.T) {
	docs := []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: odd}\ndata:\n" +
		"  a: 'yes'\n  b: '~'\n  c: \"\\x85 \\u2028 \\x7f\"\n  d: \"multi\\nline \"\n  '<<': x\n  e: '0x1F'\n" +
		"spec: {n: [1, -0, 1.5, 1e21, 9007199254740993, 18446744073709551615], t: 2001-12-14, b: true, z: null}\n"}
	require.NoError(t, filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(p)
		docs = append(docs, string(data))
		return err
	}))
	var n int
	for _, doc := range docs {
		objs, err := ParseObjects("Kustomization/x/y", []byte(doc))
		if err != nil {
			continue // not a manifest the review reads
		}
		for _, o := range objs {
			for _, v := range []map[string]any{o.Value, maskObject(redact(o.Value, true, nil), nil, false)} {
				want := "" // what toYAML prints of what Marshal refuses
				if b, err := sigyaml.Marshal(v); err == nil {
					want = string(b)
				}
				require.Equal(t, want, toYAML(v), "%s", o.ID)
				n++
			}
		}
	}
	require.Greater(t, n, 20, "objects compared")
}
