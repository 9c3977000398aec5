//go:build linux

package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fluxpack/fluxpack/internal/cli"
)

// onTerminal runs fluxpack with args, its stdout a pseudo-terminal, and
// returns what the terminal got (\r\n read as \n) and the exit code.
func onTerminal(t *testing.T, args ...string) (string, int) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	read := make(chan []byte)
	go func() {
		out, _ := io.ReadAll(master) // ends with EIO once tty is closed
		read <- out
	}()
	var stderr bytes.Buffer
	code := cli.Main(t.Context(), "test", args, tty, &stderr)
	require.NoError(t, tty.Close())
	return strings.ReplaceAll(string(<-read), "\r\n", "\n"), code
}

// Lint's findings are coloured on a terminal, the file:line bold and the
// rule in its severity's colour (an error red, a hint cyan), and not with
// $NO_COLOR set, with TERM=dumb, or into a file.
func TestLintColour(t *testing.T) {
	stack := []string{"lint", "-f", "testdata/stacks/external/stack.yaml"}
	fleet := []string{"lint", "--fleet", "../../fleet/testdata/fleet/fleet.yaml"}
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("NO_COLOR", "")

	out, code := onTerminal(t, stack...)
	assert.Equal(t, cli.ExitFinding, code)
	assert.True(t, strings.HasPrefix(out, "\x1b[1mtestdata/stacks/external/stack.yaml:10\x1b[0m: layer \"apps\": "), "%q", out)
	assert.True(t, strings.HasSuffix(out, "\x1b[31m[substitute-from]\x1b[0m\n"), "%q", out)
	out, _ = onTerminal(t, fleet...)
	assert.Contains(t, out, "\x1b[36m[merge]\x1b[0m\n", "a hint in cyan")
	assert.Contains(t, out, "all clusters: \x1b[1m")

	for _, env := range [][2]string{{"NO_COLOR", "1"}, {"TERM", "dumb"}} {
		t.Run(env[0]+"="+env[1], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			for _, args := range [][]string{stack, fleet} {
				out, _ := onTerminal(t, args...)
				assert.Regexp(t, `\[[a-z-]+\]\n$`, out, "fluxpack %s: the findings", strings.Join(args, " "))
				assert.NotContains(t, out, "\x1b[", "fluxpack %s: colour with %s=%s", strings.Join(args, " "), env[0], env[1])
			}
		})
	}

	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	var stderr bytes.Buffer
	cli.Main(t.Context(), "test", stack, file, &stderr)
	require.NoError(t, file.Close())
	data, err := os.ReadFile(file.Name())
	require.NoError(t, err)
	assert.Contains(t, string(data), "[substitute-from]\n")
	assert.NotContains(t, string(data), "\x1b[", "colour into a file")
}

// TestColourRule: lint and diff follow one rule (no-color.org): colour only
// on a terminal, never with $NO_COLOR set to a non-empty value or with
// TERM=dumb; an empty $NO_COLOR is as good as none.
func TestColourRule(t *testing.T) {
	base, head := reviewFixture(t)
	commands := map[string][]string{
		"lint": {"lint", "-f", "testdata/stacks/external/stack.yaml"},
		"diff": {"diff", filepath.Join(head, "clusters", "prod"), "--root", head, "--base-dir", base},
	}
	unset := "(unset)"
	tests := []struct {
		noColor, term string
		tty           bool
		want          bool
	}{
		{noColor: unset, term: "xterm-256color", tty: true, want: true},
		{noColor: "", term: "xterm-256color", tty: true, want: true},
		{noColor: "1", term: "xterm-256color", tty: true, want: false},
		{noColor: "false", term: "xterm-256color", tty: true, want: false},
		{noColor: unset, term: "dumb", tty: true, want: false},
		{noColor: unset, term: "xterm-256color", tty: false, want: false},
		{noColor: "", term: "xterm-256color", tty: false, want: false},
	}
	for _, tt := range tests {
		for name, args := range commands {
			t.Run(fmt.Sprintf("%s/NO_COLOR=%s/TERM=%s/tty=%v", name, tt.noColor, tt.term, tt.tty), func(t *testing.T) {
				t.Setenv("TERM", tt.term)
				t.Setenv("NO_COLOR", tt.noColor)
				if tt.noColor == unset {
					require.NoError(t, os.Unsetenv("NO_COLOR"))
				}
				var out string
				if tt.tty {
					out, _ = onTerminal(t, args...)
				} else {
					file, err := os.Create(filepath.Join(t.TempDir(), "out"))
					require.NoError(t, err)
					var stderr bytes.Buffer
					cli.Main(t.Context(), "test", args, file, &stderr)
					require.NoError(t, file.Close())
					data, err := os.ReadFile(file.Name())
					require.NoError(t, err)
					out = string(data)
				}
				require.NotEmpty(t, out, "fluxpack %s printed nothing", strings.Join(args, " "))
				assert.Equal(t, tt.want, strings.Contains(out, "\x1b["), "fluxpack %s: colour; got %q", strings.Join(args, " "), out)
			})
		}
	}
}

// TestStatusWatchRedraws: status --watch on a terminal clears the screen
// and draws the whole status again on each change; into a file or a
// pipe it prints the first status, then a line per change.
func TestStatusWatchRedraws(t *testing.T) {
	fk, kubeconfig := startFakeKube(t, racyCluster()...)
	crs := fluxObject("Kustomization", "crs", nil, "True", "ReconciliationSucceeded", "Applied revision: "+fakeRevision, map[string]any{"lastAppliedRevision": fakeRevision, "lastAttemptedRevision": fakeRevision})
	crs["metadata"].(map[string]any)["resourceVersion"] = "8"
	fk.modified = []map[string]any{crs}
	args := []string{"status", "--kubeconfig", kubeconfig, "--watch", "--timeout", "2s"}

	out, code := onTerminal(t, args...)
	require.Equal(t, cli.ExitOK, code)
	screens := strings.Split(out, "\x1b[H\x1b[2J")
	require.Len(t, screens, 3, "two screens, each after a clear: %q", out)
	assert.Contains(t, screens[1], "Blocking:", "the first screen: crs fails")
	assert.Contains(t, screens[2], "crs", "the second screen is the whole status again")
	assert.NotContains(t, screens[2], "Blocking:", "crs is Ready on the second screen")

	stdout, stderr, code := run(t, args...)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.NotContains(t, stdout, "\x1b[", "no escapes into a pipe")
	assert.Equal(t, 1, strings.Count(stdout, "Blocking:"), "the first status in full, then changes alone: %q", stdout)
}
