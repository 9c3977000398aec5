package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// A repository's import, written to a folder below the root, renders from
// there: its layers' paths are relative to the file, a layer from another
// Git repository is not looked for in the stack's folder, an opt-in
// (suspended) Kustomization stays suspended, and a tenant's Kustomization
// is left to the layer that applies it, in its own namespace.
func TestImportThenRender(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.CopyFS(repo, os.DirFS(filepath.Join(testutil.RepoRoot(t), "fluxrepo", "testdata", "repos", "opt-in"))))
	stack := filepath.Join(repo, "platform", "stack.yaml")
	_, stderr, code := run(t, "import", filepath.Join(repo, "clusters", "prod"), "--root", repo, "--output-file", stack)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "Kustomization/team-a/team-a: not imported as a layer: it is a tenant's (namespace team-a, serviceAccountName team-a")

	out := filepath.Join(t.TempDir(), "flux")
	_, stderr, code = run(t, "render", "-f", stack, "-d", out)
	require.Equal(t, cli.ExitOK, code, "render of the imported stack: %s", stderr)

	layer := func(name string) kustomizev1.Kustomization {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(out, "layers", name+".yaml"))
		require.NoError(t, err)
		var k kustomizev1.Kustomization
		require.NoError(t, sigyaml.Unmarshal(data, &k))
		return k
	}
	obs := layer("observability")
	assert.True(t, obs.Spec.Suspend, "the opt-in layer is deployed: suspend was dropped")
	assert.Equal(t, "../observability", obs.Spec.Path, "relative to platform/stack.yaml (Flux resolves it from the source's root)")
	crds := layer("crds-tailscale-operator")
	assert.Equal(t, "tailscale", crds.Spec.SourceRef.Name)
	assert.Equal(t, "./cmd/k8s-operator/deploy/crds", crds.Spec.Path, "another source's path is its own")
	assert.False(t, layer("infrastructure").Spec.Suspend)
	_, err := os.Stat(filepath.Join(out, "layers", "team-a.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the tenant's Kustomization became a layer in flux-system")

	// Outside the repository the paths cannot be relative to the file:
	// they stay relative to the root, and import says so.
	elsewhere := filepath.Join(t.TempDir(), "stack.yaml")
	_, stderr, code = run(t, "import", filepath.Join(repo, "clusters", "prod"), "--root", repo, "--output-file", elsewhere)
	assert.Equal(t, cli.ExitOK, code)
	assert.Contains(t, stderr, "is written outside the repository")
	data, err := os.ReadFile(elsewhere)
	require.NoError(t, err)
	assert.Contains(t, string(data), "path: ./observability")
}
