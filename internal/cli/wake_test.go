package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// `fluxpack wake ENTRY -d DIR`: writes the folder and the Secret, says so
// on stdout, writes nothing when run again; --check exits 0 while the
// folder is current and 1 once a dependsOn changed; no --secret-file is a
// warning, a secret file inside the repository an error (exit 2).
func TestWakeCommand(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join(testutil.RepoRoot(t), "fluxrepo", "testdata", "repos", "platform-hierarchy"))))
	entry := filepath.Join(root, "clusters", "mycluster-0")
	dir := filepath.Join(entry, "wake")
	secret := filepath.Join(t.TempDir(), "wake-secret.yaml")
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Main(t.Context(), "test", append([]string{"wake", entry, "--root", root, "-d", dir}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := run("--secret-file", secret)
	require.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "wrote "+filepath.Join(dir, "kustomization.yaml")+"\nwrote "+filepath.Join(dir, "wake.yaml")+
		"\nwrote "+filepath.Join(dir, "objects/kustomization.yaml")+
		"\nwrote the wake Secret to "+secret+": apply it to the cluster (it never goes into the repository)\n", out)
	token, err := os.ReadFile(secret)
	require.NoError(t, err)

	code, out, _ = run("--secret-file", secret)
	require.Equal(t, cli.ExitOK, code)
	assert.Equal(t, dir+" is up to date\n", out)
	again, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, string(token), string(again), "the Secret changed")

	code, out, _ = run("--check")
	assert.Equal(t, cli.ExitOK, code)
	assert.Equal(t, dir+" is up to date\n", out)

	apps := filepath.Join(entry, "apps.yaml")
	data, err := os.ReadFile(apps)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(apps, []byte(strings.Replace(string(data), "    - name: observability\n", "", 1)), 0o644))
	code, out, errOut = run("--check")
	assert.Equal(t, cli.ExitFinding, code)
	assert.Equal(t, "stale: "+filepath.Join(dir, "wake.yaml")+"\n", out)
	assert.Contains(t, errOut, "are stale: run fluxpack wake")

	code, out, errOut = run()
	assert.Equal(t, cli.ExitOK, code, errOut)
	assert.Equal(t, "wrote "+filepath.Join(dir, "wake.yaml")+"\n", out)
	assert.Contains(t, errOut, "no --secret-file")

	code, _, errOut = run("--secret-file", filepath.Join(root, "secret.yaml"))
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, errOut, "inside the repository")

	var stdout, stderr bytes.Buffer
	code = cli.Main(t.Context(), "test", []string{"wake", entry, "--root", root}, &stdout, &stderr)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr.String(), `"dir" not set`)
}
