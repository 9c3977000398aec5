package fluxbuild_test

import (
	"errors"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// Two files of a directory without a kustomization file that define one
// object, in a directory kustomize builds (a sub-folder has its own
// kustomization, so Flux's generated one names it): kustomize's error names
// neither file and ends about reading a file as a directory; the build's
// names both, as for a directory read without kustomize. Found on a public
// fleet repository (clusters/staging of DecentM/fleet-infra).
func TestDuplicateAcrossFilesNamesBoth(t *testing.T) {
	ks := func(name string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./apps\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
	}
	for name, sub := range map[string]bool{"kustomized": true, "plain": false} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"clusters/staging/apps.yaml":           ks("apps"),
				"clusters/staging/infrastructure.yaml": ks("infrastructure") + "---\n" + ks("apps"),
			}
			if sub {
				files["clusters/staging/flux-system/kustomization.yaml"] = "resources: [config.yaml]\n"
				files["clusters/staging/flux-system/config.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: flux-system}\n"
			}
			testutil.WriteFiles(t, dir, files)
			_, err := fluxbuild.Build(t.Context(), fluxbuild.Source{Dir: dir}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./clusters/staging"}})
			require.Error(t, err)
			assert.True(t, errors.Is(err, fluxbuild.ErrDuplicateID), "%v", err)
			var fe *fluxbuild.FileError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, filepath.Join(dir, "clusters", "staging", "infrastructure.yaml"), fe.Path, "the file, joined with the source's directory")
			assert.Equal(t, 12, fe.Line, "the second document")
			assert.Contains(t, err.Error(), "infrastructure.yaml:12: duplicate object ID: Kustomization/flux-system/apps is already at clusters/staging/apps.yaml:1")
			assert.NotContains(t, err.Error(), "not directory")
		})
	}
}
