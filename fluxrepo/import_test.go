package fluxrepo_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
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
