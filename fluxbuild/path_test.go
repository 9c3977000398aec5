package fluxbuild

import (
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Kustomization's path cannot leave its source: kustomize-controller
// joins it to the artifact with securejoin, so ../.. is the artifact's
// root and ../elsewhere a folder of it, never a folder beside it.
func TestPathStaysInTheSource(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "repo")
	for name, content := range map[string]string{
		"repo/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: in-the-source}\n",
		"elsewhere/outside.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n",
	} {
		p := filepath.Join(top, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	objs, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "../../.."}})
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "in-the-source", objs[0].Name)
	_, err = Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "../elsewhere"}})
	require.ErrorIs(t, err, os.ErrNotExist, "../elsewhere is a folder of the source, which has none")
}
