package fluxrepo_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
)

// A tree that applies no Kustomization (a flux-operator cluster's folder
// of FluxInstance and ResourceSets) has nothing to import, and says so.
func TestImportNothingToImport(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c/instance.yaml": "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec: {distribution: {version: 2.x}}\n",
	})
	_, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	require.Error(t, err)
	assert.ErrorContains(t, err, "applies no Kustomization, only FluxInstance/flux-system/flux")
	assert.ErrorContains(t, err, "nothing to import")
}

// Every fixture repository (and the opt-in one: suspended layers, a
// tenant, a layer of another Git repository), imported to a stack file in
// a folder below its root, renders from there: the stack the import
// writes is one render accepts, its paths found from the file.
func TestImportedFixturesRender(t *testing.T) {
	all := append(slices.Clone(fixtures), fixture{name: "opt-in", repo: "opt-in", entry: "clusters/prod"})
	for _, f := range all {
		if strings.HasSuffix(f.name, "-undeclared") {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join("testdata", "repos", f.repo))))
			stack := filepath.Join(root, "platform", "imported", "stack.yaml")
			imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithStackFile(stack)}, f.opts...)...)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(stack), 0o755))
			require.NoError(t, os.WriteFile(stack, imp.Stack, 0o644))
			r, err := layering.RenderFile(t.Context(), stack, filepath.Join(t.TempDir(), "flux"))
			require.NoError(t, err, "render of the stack imported from %s:\n%s", f.entry, imp.Stack)
			assert.NotEmpty(t, r.Plan.Layers)
		})
	}
}
