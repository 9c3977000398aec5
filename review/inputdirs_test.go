package review

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a layer whose path has no kustomization file reads: Flux's generated
// kustomization takes every file below it, except below a sub-folder with
// a kustomization file (a link to one too), where only what that file
// names is read.
func TestInputDirsReadAsFluxGenerates(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	write("apps/loose/sub/cm.yaml", "kind: ConfigMap\n")
	write("apps/ns/kustomization.yaml", "resources:\n  - ./app/ks.yaml\n  - ./gone.yaml\n")
	write("apps/ns/app/ks.yaml", "kind: Kustomization\n")
	write("apps/ns/app/app/helmrelease.yaml", "kind: HelmRelease\n")
	write("apps/ns/notes.yaml", "kind: ConfigMap\n")
	write("shared/linked.yaml", "resources:\n  - ./cm.yaml\n")
	write("apps/linked/cm.yaml", "kind: ConfigMap\n")
	write("apps/linked/other.yaml", "kind: ConfigMap\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "shared", "linked.yaml"), filepath.Join(root, "apps", "linked", "kustomization.yaml")))

	refs := &folders{}
	start := filepath.Join(root, "apps")
	dirs, files := inputDirs(nil, start, nil, nil, refs)
	reads := func(rel string) bool {
		p := filepath.Join(root, filepath.FromSlash(rel))
		return slices.Contains(files, p) || slices.ContainsFunc(dirs, func(d string) bool { return p == d || generatedReads(d, p, refs) })
	}
	for rel, want := range map[string]bool{
		"apps/loose/sub/cm.yaml":           true,  // no kustomization file down to it
		"apps/loose/sub/new.yaml":          true,  // a file added there
		"apps/ns/kustomization.yaml":       true,  // the kustomization file itself
		"apps/ns/app/ks.yaml":              true,  // named
		"apps/ns/gone.yaml":                true,  // named, deleted
		"apps/ns/notes.yaml":               false, // beside, not named
		"apps/ns/app/app/helmrelease.yaml": false, // the app's own layer reads it
		"apps/linked/cm.yaml":              true,  // named by a linked kustomization file
		"apps/linked/other.yaml":           false,
	} {
		assert.Equal(t, want, reads(rel), rel)
	}
}

// namedPaths takes every value of a kustomization file, at any depth and
// KEY=PATH generator entries too, and no field name: a folder named like a
// field ("resources") is not read unless a value names it.
func TestNamedPaths(t *testing.T) {
	got := namedPaths([]byte(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [./app, ../shared/cm.yaml]
patches:
  - path: patch.yaml
    target: {kind: Deployment}
configMapGenerator:
  - name: values
    files: [values.yaml=helm/values.yaml]
unknownField: {nested: [extra.yaml]}
`))
	for _, want := range []string{"./app", "../shared/cm.yaml", "patch.yaml", "Deployment", "values", "helm/values.yaml", "values.yaml=helm/values.yaml", "extra.yaml"} {
		assert.Contains(t, got, want)
	}
	for _, key := range []string{"apiVersion", "resources", "patches", "path", "target", "files", "unknownField", "nested"} {
		assert.NotContains(t, got, key)
	}
}
