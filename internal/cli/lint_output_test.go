package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// Every lint result ends with one line on stderr, its summary, and
// nothing else: findings or not, a stack, a repository or a fleet. Logs
// (a symlink left out as source-controller leaves it out) only with
// --debug.
func TestLintStderrIsTheSummary(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
		"apps/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\n",
		"elsewhere.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linked\n  namespace: default\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(repo, "elsewhere.yaml"), filepath.Join(repo, "apps", "link.yaml")))
	entry := []string{"lint", filepath.Join(repo, "clusters", "prod"), "--root", repo}

	// A clean fleet: one cluster of a one-layer stack.
	clean := t.TempDir()
	testutil.WriteFiles(t, clean, map[string]string{
		"stack.yaml":   "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: platform, namespace: flux-system}\nspec:\n  source: {url: oci://registry.example.com/platform, tag: latest}\n  layers:\n    - {name: apps, path: ./apps}\n",
		"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\n",
		"fleet.yaml":   "apiVersion: fluxpack.dev/v1alpha1\nkind: Fleet\nmetadata: {name: platform}\nspec:\n  stack: ./stack.yaml\n  artifact: oci://registry.example.com/platform/{{cluster}}:main\n  clusters:\n    - {name: staging}\n",
	})

	for _, tt := range []struct {
		name    string
		args    []string
		code    int
		summary string
	}{
		{name: "repository", args: entry, summary: "fluxpack: no findings in 2 layers, 2 objects"},
		{name: "stack with a finding", args: []string{"lint", "-f", "testdata/stacks/external/stack.yaml"}, code: cli.ExitFinding, summary: "fluxpack: 1 finding in 1 layer, 1 object"},
		{name: "clean fleet", args: []string{"lint", "--fleet", filepath.Join(clean, "fleet.yaml")}, summary: "fluxpack: no findings in 1 cluster"},
		{name: "fleet with findings", args: []string{"lint", "--fleet", "../../fleet/testdata/fleet/fleet.yaml"}, code: cli.ExitFinding, summary: "fluxpack: 2 findings in 2 clusters (and 2 hints)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.summary+"\n", stderr, "fluxpack %s: stderr is the summary line alone", strings.Join(tt.args, " "))
		})
	}

	_, stderr, code := run(t, append(entry, "--debug")...)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "skipping a symlink", "--debug shows the logs")
	assert.True(t, strings.HasSuffix(stderr, "\nfluxpack: no findings in 2 layers, 2 objects\n"), stderr)
}
