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
)

// Seed 004's app-of-apps: external-dns and external-secrets (wave -2),
// then ingress (-1), then the rest, as layers each waiting for the wave
// before it; the stack builds, and what Flux cannot say is listed.
func TestImportSeed004(t *testing.T) {
	for _, dir := range []string{"testdata/app-of-apps", "testdata/app-of-apps/apps"} {
		imp, err := argocd.Import(dir)
		require.NoError(t, err)
		b, err := layering.ParseStack("stack.yaml", imp.Stack)
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
	b, err := layering.ParseStack("stack.yaml", imp.Stack)
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
