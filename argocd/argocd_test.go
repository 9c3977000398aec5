package argocd_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/argocd"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/render"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Seed 004's app-of-apps: external-dns and external-secrets (wave -2),
// then ingress (-1), then the rest, as layers each waiting for the wave
// before it; the stack builds, and what Flux cannot say is listed.
func TestImportSeed004(t *testing.T) {
	for _, dir := range []string{"testdata/app-of-apps", "testdata/app-of-apps/apps"} {
		imp, err := argocd.Import(dir)
		require.NoError(t, err)
		b, err := stackfile.Parse("stack.yaml", imp.Stack)
		require.NoError(t, err, "%s", imp.Stack)
		plan, err := b.Build()
		require.NoError(t, err)
		deps := map[string][]string{}
		for _, l := range plan.Layers {
			deps[l.Name] = l.DependsOn
			assert.True(t, l.Kustomization.Spec.Wait, "layer %s waits, as Argo CD waits for a wave to be healthy", l.Name)
		}
		assert.Empty(t, deps["external-dns"])
		assert.Empty(t, deps["external-secrets"])
		assert.Equal(t, []string{"external-dns", "external-secrets"}, deps["ingress-nginx"])
		assert.Equal(t, []string{"ingress-nginx"}, deps["prometheus-stack"])
		assert.Equal(t, []string{"ingress-nginx"}, deps["efs-csi"])
		assert.NotContains(t, deps, "root", "the app of apps is the stack's root, not a layer")

		var out strings.Builder
		out.Write(imp.Stack)
		for _, d := range imp.Differences {
			out.WriteString("# difference: " + d + "\n")
		}
		testutil.Golden(t, "import-"+filepath.Base(dir), []byte(out.String()))
	}
}

// The imported platform as lint and graph see it: the waves' order drawn,
// and the layers whose sources are Argo CD's Git repositories (not
// available offline) reported once each, their objects unknown.
func TestImportedLintAndGraph(t *testing.T) {
	imp, err := argocd.Import("testdata/app-of-apps")
	require.NoError(t, err)
	b, err := stackfile.Parse("stack.yaml", imp.Stack)
	require.NoError(t, err)
	plan, err := b.Build()
	require.NoError(t, err)
	g, err := plan.Graph(layering.GraphMermaid)
	require.NoError(t, err)
	testutil.Golden(t, "app-of-apps-graph-mermaid", g)

	rep, err := lint.Stack(t.Context(), b, "testdata/app-of-apps")
	require.NoError(t, err)
	var out strings.Builder
	for _, f := range rep.Findings {
		out.WriteString(f.String() + "\n")
	}
	testutil.Golden(t, "app-of-apps-lint", []byte(out.String()))
}

func TestImportBadInput(t *testing.T) {
	_, err := argocd.Import(t.TempDir())
	require.ErrorContains(t, err, "none found")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"a.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\n  annotations: {argocd.argoproj.io/sync-wave: soon}\n"})
	_, err = argocd.Import(dir)
	var fe *argocd.FileError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, fe.Error(), "a.yaml:1")
	assert.Contains(t, fe.Error(), "is not an integer")
}

// An Application from another Git repository reads a GitRepository of its
// own (named after the repository, a Difference says to create it), and the
// stack renders although that repository's path is not a folder of the
// stack's: only the app of apps' repository is.
func TestImportOtherRepository(t *testing.T) {
	app := func(name, repo, path string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name + "\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: " + repo +
			"\n    targetRevision: main\n    path: " + path + "\n  destination:\n    server: https://kubernetes.default.svc\n  syncPolicy:\n    automated:\n      prune: true\n"
	}
	own := "https://github.com/example/platform.git"
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"apps/infra.yaml":     app("infra", own, "infra"),
		"apps/web.yaml":       app("web", own, "web"),
		"apps/tailscale.yaml": app("tailscale-crds", "https://github.com/tailscale/tailscale.git", "cmd/k8s-operator/deploy/crds"),
		"infra/ns.yaml":       "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n",
		"web/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: infra\n",
	})
	imp, err := argocd.Import(filepath.Join(dir, "apps"))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(imp.Differences, "\n"), "Application/tailscale-crds: its repository https://github.com/tailscale/tailscale.git is not the app of apps' one: the layer reads GitRepository/tailscale, which you create")
	testutil.WriteFiles(t, dir, map[string]string{"stack.yaml": string(imp.Stack)})
	r, err := render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err, "%s", imp.Stack)
	for _, l := range r.Plan.Layers {
		want := "flux-system"
		if l.Name == "tailscale-crds" {
			want = "tailscale"
		}
		assert.Equal(t, want, l.Kustomization.Spec.SourceRef.Name, "layer %s", l.Name)
	}
}
