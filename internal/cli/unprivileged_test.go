package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// runUnprivileged runs fluxpack with args as an unprivileged user (nobody)
// when the tests run as root, since root reads any file; otherwise in
// process.
func runUnprivileged(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	if os.Geteuid() != 0 {
		return run(t, args...)
	}
	// The test binary sits in a 0700 build dir; copy it where nobody can run it.
	binDir := t.TempDir()
	require.NoError(t, os.Chmod(binDir, 0o755))
	bin := filepath.Join(binDir, "fluxpack.test")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())

	raw, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw), "HOME="+binDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return stdout.String(), stderr.String(), 0
}

// traversable opens dir and its parents up to /tmp's children for others.
func traversable(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
}

func TestPushUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"ok.yaml": "kind: ConfigMap\n", "locked/secret.yaml": "kind: ConfigMap\n"})
	require.NoError(t, os.Chmod(filepath.Join(dir, "locked", "secret.yaml"), 0o000))
	traversable(t, dir)

	stdout, stderr, code := runUnprivileged(t, "push", dir, "oci://127.0.0.1:1/platform:v1", "--timeout", "5s")
	assert.Equal(t, cli.ExitError, code, "stderr: %s", stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "fluxpack: pushing "+dir+" to oci://127.0.0.1:1/platform:v1: "+filepath.Join(dir, "locked", "secret.yaml")+": permission denied")
}
