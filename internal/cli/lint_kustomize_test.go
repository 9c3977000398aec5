package cli_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestLintKustomizeWarningsAreDebugLogs: a layer whose kustomization has a deprecated
// field (patchesStrategicMerge) makes kustomize print a warning to the
// process's stderr; lint's and diff's stderr holds their summary line
// alone, and the warning goes to the debug log, with --debug only.
func TestLintKustomizeWarningsAreDebugLogs(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		".git/HEAD":               "ref: refs/heads/main\n",
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
		"apps/kustomization.yaml": "resources: [cm.yaml]\npatchesStrategicMerge:\n- patch.yaml\n",
		"apps/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  a: b\n",
		"apps/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  a: c\n",
	})
	entry := filepath.Join(dir, "clusters", "prod")
	base := t.TempDir() // the same tree, for diff
	require.NoError(t, os.CopyFS(base, os.DirFS(dir)))
	for _, tt := range []struct {
		name    string
		args    []string
		logged  bool   // the warning is in the debug log
		summary string // stderr without --debug
	}{
		{name: "plain", args: []string{"lint", entry}, summary: "fluxpack: no findings in 2 layers, 2 objects\n"},
		{name: "debug", args: []string{"lint", entry, "--debug"}, logged: true},
		{name: "diff", args: []string{"diff", entry, "--root", dir, "--base-dir", base}, summary: "fluxpack: clusters/prod: 0 objects changed, 0 races introduced, 0 fixed\n"},
		{name: "diff-debug", args: []string{"diff", entry, "--root", dir, "--base-dir", base, "--debug"}, logged: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr string
			var code int
			process := processStderr(t, func() { stdout, stderr, code = run(t, tt.args...) })
			require.Equal(t, cli.ExitOK, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(tt.args, " "), stderr)
			if tt.args[0] == "lint" {
				assert.Empty(t, stdout, "fluxpack %s: stdout", strings.Join(tt.args, " "))
			}
			assert.Empty(t, process, "fluxpack %s: kustomize printed to the process's stderr", strings.Join(tt.args, " "))
			warning := "kustomize: Warning: 'patchesStrategicMerge' is deprecated."
			if tt.logged {
				assert.Contains(t, stderr, warning, "fluxpack %s: the debug log", strings.Join(tt.args, " "))
				return
			}
			assert.Equal(t, tt.summary, stderr, "fluxpack %s: stderr is the summary line", strings.Join(tt.args, " "))
		})
	}
}

// processStderr runs fn with the process's os.Stderr sent to a pipe and
// returns what was written there.
func processStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	func() {
		defer func() { os.Stderr = saved }()
		fn()
	}()
	require.NoError(t, w.Close())
	out := <-done
	require.NoError(t, r.Close())
	return string(out)
}
