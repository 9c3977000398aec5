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

// An Argo CD app of apps, imported to a folder below the repository's root,
// renders from there: the layers of the app of apps' repository have paths
// relative to the file, an Application of another repository keeps its
// own path. Without a Git checkout or --root the root is unknown, and
// import says the paths are not relative to the file.
func TestImportArgoCDThenRender(t *testing.T) {
	app := func(name, repo, path string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name + "\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: " + repo +
			"\n    targetRevision: main\n    path: " + path + "\n  destination:\n    server: https://kubernetes.default.svc\n  syncPolicy:\n    automated:\n      prune: true\n"
	}
	own := "https://github.com/example/platform.git"
	files := map[string]string{
		"argocd/apps/infra.yaml":     app("infra", own, "infra"),
		"argocd/apps/web.yaml":       app("web", own, "deploy/web"),
		"argocd/apps/tailscale.yaml": app("tailscale-crds", "https://github.com/tailscale/tailscale.git", "cmd/k8s-operator/deploy/crds"),
		"infra/ns.yaml":              "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n",
		"deploy/web/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: infra\n",
	}
	paths := func(t *testing.T, out string) map[string]string {
		t.Helper()
		got := map[string]string{}
		for _, name := range []string{"infra", "web", "tailscale-crds"} {
			data, err := os.ReadFile(filepath.Join(out, "layers", name+".yaml"))
			require.NoError(t, err)
			var k kustomizev1.Kustomization
			require.NoError(t, sigyaml.Unmarshal(data, &k))
			got[name] = k.Spec.Path
		}
		return got
	}
	for _, tt := range []struct {
		name string
		git  bool     // the repository is a Git checkout (.git at its root)
		args []string // more import flags, given the root
	}{
		{name: "checkout", git: true},
		{name: "root given", args: []string{"--root"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			testutil.WriteFiles(t, repo, files)
			if tt.git {
				require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
			}
			stack := filepath.Join(repo, "platform", "sub", "stack.yaml")
			args := []string{"import", "--argocd", filepath.Join(repo, "argocd", "apps"), "--output-file", stack}
			if len(tt.args) > 0 {
				args = append(args, "--root", repo)
			}
			_, stderr, code := run(t, args...)
			require.Equal(t, cli.ExitOK, code, stderr)
			out := filepath.Join(t.TempDir(), "flux")
			_, stderr, code = run(t, "render", "-f", stack, "-d", out)
			require.Equal(t, cli.ExitOK, code, "render of the imported stack: %s", stderr)
			assert.Equal(t, map[string]string{
				"infra":          "../../infra",
				"web":            "../../deploy/web",
				"tailscale-crds": "./cmd/k8s-operator/deploy/crds",
			}, paths(t, out), "paths relative to platform/sub/stack.yaml; another repository's are its own")
		})
	}

	// No Git checkout and no --root: the paths stay the Applications',
	// and import says why the stack does not render where it is written.
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, files)
	stack := filepath.Join(repo, "platform", "stack.yaml")
	_, stderr, code := run(t, "import", "--argocd", filepath.Join(repo, "argocd", "apps"), "--output-file", stack)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "so the repository's root is unknown")
	data, err := os.ReadFile(stack)
	require.NoError(t, err)
	assert.Contains(t, string(data), "path: ./infra\n")

	// Flags that read a Flux repository are refused, not ignored.
	_, stderr, code = run(t, "import", "--argocd", filepath.Join(repo, "argocd", "apps"), "--external", "ConfigMap/flux-system/vars")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--source and --external read a Flux repository")
}
