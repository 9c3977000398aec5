package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestExitCodes runs every command once per exit code it can give, as the
// table of docs/commands.md lists them: 0 ok, 1 a finding or a failed check, 2 an
// error, 130 interrupted (a command whose context is cancelled, as the
// SIGINT handler cancels it, while it reaches a registry). It also checks
// that each command of that table is run here with each of its
// codes.
func TestExitCodes(t *testing.T) {
	root := testutil.RepoRoot(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir() // not a Git checkout
	testutil.WriteFiles(t, dir, tree)
	other := t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"kustomization.yaml": "resources: []\n"})
	keys := t.TempDir()
	key, pub := testutil.CosignKeyPair(t, keys, "hunter2")
	t.Setenv("COSIGN_PASSWORD", "hunter2")
	url := "oci://" + reg.Host + "/platform"
	meta := []string{"--source", "https://example.com/platform.git", "--revision", "main@sha1:" + strings.Repeat("1", 40)}
	for _, setup := range [][]string{
		append([]string{"push", dir, url + ":signed", "--sign", "cosign", "--key", key}, meta...),
		append([]string{"push", other, url + ":unsigned"}, meta...),
	} {
		_, stderr, code := run(t, setup...)
		require.Equal(t, cli.ExitOK, code, "setup: fluxpack %s: %s", strings.Join(setup, " "), stderr)
	}
	stack := filepath.Join(root, "examples", "external-secrets", "platform", "stack.yaml")
	undeclared := filepath.Join("testdata", "stacks", "external", "stack.yaml")
	fx := filepath.Join(root, "fluxrepo", "testdata", "repos", "fluxcd-example")
	missing := filepath.Join(t.TempDir(), "nope")
	tf := filepath.Join(root, "outputs", "testdata", "outputs", "terraform.json")
	wakeRepo := t.TempDir()
	require.NoError(t, os.CopyFS(wakeRepo, os.DirFS(filepath.Join(root, "fluxrepo", "testdata", "repos", "platform-hierarchy"))))
	wakeEntry := filepath.Join(wakeRepo, "clusters", "mycluster-0")

	// A fake API server for status and wait (fakekube_test.go).
	_, kubeReady := startFakeKube(t, readySource(), readyLayer("a"))
	_, kubeBroken := startFakeKube(t, readySource(), fluxObject("Kustomization", "a", nil, "False", "BuildFailed", "kustomize build failed", map[string]any{"lastAttemptedRevision": fakeRevision}))

	tests := []struct {
		cmd         string
		code        int
		args        []string
		interrupted bool // run with a cancelled context
	}{
		{"lint", cli.ExitOK, []string{"lint", "-f", undeclared, "--external", "ConfigMap/flux-system/cluster-vars"}, false},
		{"lint", cli.ExitFinding, []string{"lint", "-f", undeclared}, false},
		{"lint", cli.ExitError, []string{"lint", "-f", missing}, false},
		{"verify", cli.ExitOK, []string{"verify", url + ":signed", "--key", pub}, false},
		{"verify", cli.ExitFinding, []string{"verify", url + ":unsigned", "--key", pub}, false},
		{"verify", cli.ExitError, []string{"verify", url + ":nope", "--key", pub}, false},
		{"verify", cli.ExitInterrupted, []string{"verify", url + ":signed", "--key", pub}, true},
		{"promote", cli.ExitOK, []string{"promote", url + ":prod", "--from", "signed", "--key", pub}, false},
		{"promote", cli.ExitFinding, []string{"promote", url + ":prod", "--from", "unsigned", "--key", pub}, false},
		{"promote", cli.ExitError, []string{"promote", url + ":prod", "--from", "nope"}, false},
		{"promote", cli.ExitInterrupted, []string{"promote", url + ":prod", "--from", "signed"}, true},
		{"diff", cli.ExitOK, []string{"diff", dir, url + ":signed"}, false},
		{"diff", cli.ExitFinding, []string{"diff", other, url + ":signed"}, false},
		{"diff", cli.ExitError, []string{"diff", missing, url + ":signed"}, false},
		{"diff", cli.ExitInterrupted, []string{"diff", dir, url + ":signed"}, true},
		{"push", cli.ExitOK, append([]string{"push", dir, url + ":v1"}, meta...), false},
		{"push", cli.ExitError, []string{"push", missing, url + ":v1"}, false},
		{"push", cli.ExitFinding, append([]string{"push", dir, url + ":v1", "--wait", "--kubeconfig", kubeBroken}, meta...), false},
		{"push", cli.ExitInterrupted, []string{"push", dir, url + ":v2"}, true},
		{"pull", cli.ExitOK, []string{"pull", url + ":signed", "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"pull", cli.ExitError, []string{"pull", url + ":nope", "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"pull", cli.ExitInterrupted, []string{"pull", url + ":signed", "-d", filepath.Join(t.TempDir(), "out")}, true},
		{"render", cli.ExitOK, []string{"render", "-f", stack, "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"render", cli.ExitError, []string{"render", "-f", missing, "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"render", cli.ExitInterrupted, []string{"render", "-f", stack, "-d", filepath.Join(t.TempDir(), "out")}, true},
		{"graph", cli.ExitOK, []string{"graph", "-f", stack, "-o", "json"}, false},
		{"graph", cli.ExitError, []string{"graph", "-f", stack, "-o", "png"}, false},
		{"import", cli.ExitOK, []string{"import", filepath.Join(fx, "clusters", "staging"), "--root", fx}, false},
		{"import", cli.ExitError, []string{"import", missing}, false},
		{"import", cli.ExitInterrupted, []string{"import", filepath.Join(fx, "clusters", "staging"), "--root", fx, "--output-file", filepath.Join(t.TempDir(), "stack.yaml")}, true},
		{"list", cli.ExitOK, []string{"list", url}, false},
		{"list", cli.ExitError, []string{"list", "registry.example.com/platform"}, false},
		{"list", cli.ExitInterrupted, []string{"list", url}, true},
		{"tag", cli.ExitOK, []string{"tag", url + ":signed", "--tag", "stable"}, false},
		{"tag", cli.ExitError, []string{"tag", url + ":nope", "--tag", "stable"}, false},
		{"tag", cli.ExitInterrupted, []string{"tag", url + ":signed", "--tag", "latest"}, true},
		{"outputs", cli.ExitOK, []string{"outputs", tf, "--name", "cluster-vars", "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"outputs", cli.ExitError, []string{"outputs", missing, "--name", "cluster-vars", "-d", filepath.Join(t.TempDir(), "out")}, false},
		{"outputs", cli.ExitInterrupted, []string{"outputs", tf, "--name", "cluster-vars", "-d", filepath.Join(t.TempDir(), "out")}, true},
		{"wake", cli.ExitOK, []string{"wake", wakeEntry, "--root", wakeRepo, "-d", filepath.Join(wakeEntry, "wake")}, false},
		{"wake", cli.ExitFinding, []string{"wake", wakeEntry, "--root", wakeRepo, "-d", filepath.Join(wakeEntry, "stale"), "--check"}, false},
		{"wake", cli.ExitError, []string{"wake", missing, "-d", filepath.Join(t.TempDir(), "wake")}, false},
		{"wake", cli.ExitInterrupted, []string{"wake", wakeEntry, "--root", wakeRepo, "-d", filepath.Join(wakeEntry, "wake2")}, true},
		{"preview", cli.ExitOK, []string{"preview", "--cluster", filepath.Join(fx, "clusters", "staging"), "--root", fx, "infra-configs"}, false},
		{"preview", cli.ExitError, []string{"preview", "--cluster", filepath.Join(fx, "clusters", "staging"), "--root", fx, "nope"}, false},
		{"flux-patch", cli.ExitOK, []string{"flux-patch"}, false},
		{"flux-patch", cli.ExitError, []string{"flux-patch", "--requeue-dependency", "500ms"}, false},
		{"version", cli.ExitOK, []string{"version", "-o", "json"}, false},
		{"version", cli.ExitError, []string{"version", "extra"}, false},
		{"status", cli.ExitOK, []string{"status", "--kubeconfig", kubeReady}, false},
		{"status", cli.ExitError, []string{"status", "--kubeconfig", missing}, false},
		{"status", cli.ExitInterrupted, []string{"status", "--kubeconfig", kubeReady}, true},
		{"wait", cli.ExitOK, []string{"wait", "--kubeconfig", kubeReady}, false},
		{"wait", cli.ExitFinding, []string{"wait", "--kubeconfig", kubeBroken}, false},
		{"wait", cli.ExitError, []string{"wait", "--kubeconfig", missing}, false},
		{"wait", cli.ExitInterrupted, []string{"wait", "--kubeconfig", kubeReady}, true},
		// Serving until interrupted is its job: stopped, it exits 0.
		{"registry serve", cli.ExitOK, []string{"registry", "serve", "--addr", "127.0.0.1:0"}, true},
		{"registry serve", cli.ExitError, []string{"registry", "serve", "--addr", "0.0.0.0:0"}, false},
	}
	got := map[string][]int{}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s-%d", tt.cmd, tt.code), func(t *testing.T) {
			ctx := t.Context()
			if tt.interrupted {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			var stdout, stderr bytes.Buffer
			code := cli.Main(ctx, "test", tt.args, &stdout, &stderr)
			assert.Equal(t, tt.code, code, "fluxpack %s: stderr:\n%s", strings.Join(tt.args, " "), stderr.String())
			if code != cli.ExitOK {
				assert.NotEmpty(t, stderr.String(), "a non-zero exit says why on stderr")
			}
		})
		got[tt.cmd] = append(got[tt.cmd], tt.code)
	}

	// The table of docs/commands.md and this test list the same codes.
	page, err := os.ReadFile(filepath.Join(root, "docs", "commands.md"))
	require.NoError(t, err)
	table := docExitCodes(t, string(page))
	require.NotEmpty(t, table, "docs/commands.md has no exit-code table")
	for cmd, codes := range table {
		assert.ElementsMatch(t, codes, got[cmd], "docs/commands.md's exit codes of %s, and this test's", cmd)
	}
	for cmd := range got {
		assert.Contains(t, table, cmd, "the exit-code table of docs/commands.md has no row for %s", cmd)
	}
}

// docExitCodes reads the exit-code table of docs/commands.md: rows
// "| `cmd` | ✓ | ✓ | | ✓ |" under a header "| command | 0 | 1 | 2 | 130 |".
func docExitCodes(t *testing.T, page string) map[string][]int {
	t.Helper()
	header := "| command | 0 ok | 1 finding or failed check | 2 error | 130 interrupted |"
	_, rest, ok := strings.Cut(page, header)
	if !ok {
		return nil
	}
	codes := []int{cli.ExitOK, cli.ExitFinding, cli.ExitError, cli.ExitInterrupted}
	out := map[string][]int{}
	for _, line := range strings.Split(rest, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|"), "|")
		require.Len(t, cells, 5, "exit-code row %q of docs/commands.md", line)
		cmd := strings.Trim(strings.TrimSpace(cells[0]), "`")
		for i, c := range cells[1:] {
			if strings.TrimSpace(c) != "" {
				out[cmd] = append(out[cmd], codes[i])
			}
		}
		slices.Sort(out[cmd])
	}
	return out
}

// Outside a Git checkout, without --source and --revision, push says on
// stderr that the artifact records neither; with them it says nothing.
func TestPushSaysWhatItDoesNotRecord(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	url := "oci://" + reg.Host + "/platform"
	_, stderr, code := run(t, "push", dir, url+":v1")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "the artifact records no source and no revision: "+dir+" is not in a Git checkout")
	_, stderr, code = run(t, "push", dir, url+":v2", "--source", "https://example.com/platform.git")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "the artifact records no revision: ")
	_, stderr, code = run(t, "push", dir, url+":v3", "--source", "https://example.com/platform.git", "--revision", "main@sha1:"+strings.Repeat("1", 40))
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.NotContains(t, stderr, "records no")
}
