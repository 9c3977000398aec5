package fluxbuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// A YAML error in a manifest is reported at the line of the file it is
// on, counted from 1, in the first document or in a later one, whichever
// way the file is read; the message does not repeat the library's own
// line, which counts from the document and, for some errors, from 0.
func TestSyntaxErrorLine(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: z\n" // 4 lines
	tests := []struct {
		name, data string
		line       int
	}{
		{name: "first document, a key out of place on line 7",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n bad: x\n", line: 7},
		{name: "first document, a scanner error on line 7",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n  j: a: b\n", line: 7},
		{name: "second document, a key out of place on line 12",
			data: cm + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n bad: x\n", line: 12},
		{name: "second document, a mapping after a sequence on line 7",
			data: cm + "---\n- a\nb: c\n", line: 7},
		{name: "second document, its first line",
			data: cm + "---\n]\n", line: 6},
		{name: "third document, a scanner error on line 11",
			data: cm + "---\n" + cm + "---\na: b: c\n", line: 11},
		{name: "second document of a file with anchors, a key out of place on line 9",
			data: "a: &x 1\nb: *x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  k: v\n bad: x\n", line: 9},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "identity", "parser"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var err error
				switch mode {
				case "whole":
					_, err = readManifests("cm.yaml", []byte(tt.data))
				case "identity":
					_, _, err = readManifestsFor("cm.yaml", []byte(tt.data), func(string, string) bool { return true }) // every kind needs more than its identity
				case "parser":
					saved := decodePlain
					t.Cleanup(func() { decodePlain = saved })
					decodePlain = func([]byte, int) *yaml.Node { return nil }
					_, err = readManifests("cm.yaml", []byte(tt.data))
				}
				var fe *FileError
				require.True(t, errors.As(err, &fe), "want a *FileError, got %v", err)
				assert.Equal(t, tt.line, fe.Line, "the line of %v in\n%s", err, numbered(tt.data))
				assert.NotContains(t, fe.Err.Error(), "line ", "the library's line is left out")
			})
		}
	}
}

// A kustomization.yaml that is not YAML names its line too; it is read
// with sigs.k8s.io/yaml, which counts as the parser above does.
func TestKustomizationSyntaxErrorLine(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "layer"), 0o755))
	for name, body := range map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\nlabels:\n  - pairs: {a: b}\n bad: x\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "layer", name), []byte(body), 0o644))
	}
	_, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "layer"}})
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, filepath.Join(root, "layer", "kustomization.yaml"), fe.Path)
	assert.Equal(t, 7, fe.Line, "%v", err)
	assert.NotContains(t, err.Error(), "yaml: line", "the library's own count is left out")
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		fmt.Fprintf(&b, "%3d  %s\n", i+1, l)
	}
	return b.String()
}
