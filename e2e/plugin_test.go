//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/release"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestFluxPlugin ships fluxpack as a Flux CLI plugin the way a user gets it:
// the release (internal/release, what `make release` runs) is built for
// this machine's platform and served with its plugin manifest and catalog
// on 127.0.0.1; the real flux CLI (hack/tools.sh flux) installs it with
// `flux plugin install pack` from that catalog ($FLUXCD_PLUGIN_CATALOG) into
// a fresh $HOME, verifying the archive's checksum, and then runs it as
// `flux pack version`, `flux pack lint` and completion, whose output and
// exit codes must be fluxpack's own. A tampered archive must be refused.
func TestFluxPlugin(t *testing.T) {
	t.Parallel()
	flux := testutil.Tool(t, "flux")
	root := testutil.RepoRoot(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	dist := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	defer srv.Close()
	const version = "v0.0.0-e2e"
	res, err := release.Build(ctx, release.Options{
		Version: version, BaseURL: srv.URL + "/", Dir: dist, Module: root,
		Platforms: []release.Platform{release.Host()},
	})
	require.NoError(t, err)

	home := t.TempDir()
	fluxCmd := func(home string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, flux, args...)
		cmd.Dir = root
		cmd.Env = pluginEnv(home, srv.URL+"/")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("flux %s: %v", strings.Join(args, " "), err)
		}
		t.Logf("$ flux %s  (exit %d)\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), head(out.String()+errOut.String(), 12))
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}

	fluxVersion, _, code := fluxCmd(home, "version", "--client")
	require.Equal(t, 0, code)
	fluxVersion = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(fluxVersion), "flux:"))

	out, _, code := fluxCmd(home, "plugin", "search")
	require.Equal(t, 0, code)
	require.Contains(t, out, release.PluginName)

	out, errOut, code := fluxCmd(home, "plugin", "install", release.PluginName)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out+errOut, "installed pack "+version)
	installed := filepath.Join(home, ".fluxcd", "plugins", release.BinaryName)
	require.FileExists(t, installed)

	out, _, code = fluxCmd(home, "plugin", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, release.PluginName)
	require.Contains(t, out, strings.TrimPrefix(version, "v"))

	// flux pack version prints what fluxpack version prints: the same
	// binary under its own name.
	packVersion, _, code := fluxCmd(home, "pack", "version")
	require.Equal(t, 0, code)
	require.Equal(t, version+"\n", packVersion)
	plain := filepath.Join(t.TempDir(), "fluxpack")
	exe, err := os.ReadFile(installed)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(plain, exe, 0o755))
	direct, err := exec.CommandContext(ctx, plain, "version").Output()
	require.NoError(t, err)
	require.Equal(t, packVersion, string(direct))

	// Lint: exit 0 on fluxpack's order, exit 1 and the findings on the
	// hand-made one; usage lines name the plugin command.
	_, errOut, code = fluxCmd(home, "pack", "lint", "-f", "examples/external-secrets/platform/stack.yaml")
	require.Equal(t, 0, code, errOut)
	cleanCode := code
	out, errOut, code = fluxCmd(home, "pack", "lint", "-f", "examples/external-secrets/platform/naive.yaml")
	require.Equal(t, 1, code)
	racingCode := code
	require.Contains(t, out, "[webhook-order]")
	require.Contains(t, errOut, "fluxpack: 2 findings")
	out, _, code = fluxCmd(home, "pack", "lint", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Usage:\n  flux pack lint [")

	// Shell completion of flux pack asks flux-pack (cobra's __complete).
	out, _, code = fluxCmd(home, "__complete", "pack", "li")
	require.Equal(t, 0, code)
	require.Contains(t, out, "lint\t")

	// A served archive that is not the one the manifest names is refused.
	archive := filepath.Join(dist, res.Artifacts[0].Name)
	b, err := os.ReadFile(archive)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(archive, b, 0o644))
	other := t.TempDir()
	_, errOut, code = fluxCmd(other, "plugin", "install", release.PluginName)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "checksum verification failed")
	require.NoFileExists(t, filepath.Join(other, ".fluxcd", "plugins", release.BinaryName))

	recordSummary("P0", fmt.Sprintf("flux %s: plugin install pack from a loopback catalog ok (checksum verified, a tampered archive refused); flux pack version = fluxpack version = %s; flux pack lint exit %d on stack.yaml, %d on naive.yaml",
		fluxVersion, strings.TrimSpace(packVersion), cleanCode, racingCode))
}

// head is the first n lines of s, and how many more there were.
func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n+1 {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("[%d more lines]\n", len(lines)-n-1)
}

// pluginEnv is this process's environment with $HOME set to home (so the
// flux CLI's plugin directory is home/.fluxcd/plugins), the plugin catalog at
// catalog, and no kubeconfig or plugin settings of the machine's user.
func pluginEnv(home, catalog string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "FLUXCD_PLUGINS", "FLUXCD_PLUGIN_CATALOG", "KUBECONFIG":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "FLUXCD_PLUGIN_CATALOG="+catalog,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
}
