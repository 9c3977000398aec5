package cli_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// slowRegistry is an in-process registry that answers every request after
// delay and sends blobs 256 KiB per 100 ms: slow enough to interrupt a
// command while it reads, compresses, uploads or downloads.
func slowRegistry(t *testing.T, delay time.Duration) string {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			h.ServeHTTP(&throttled{ResponseWriter: w}, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

type throttled struct{ http.ResponseWriter }

func (w *throttled) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 256<<10)
		m, err := w.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(100 * time.Millisecond)
		p = p[k:]
	}
	return n, nil
}

// interrupt runs fluxpack with args in a child process (as cmd/fluxpack
// runs, SIGINT cancelling its context) with $TMPDIR at tmp, sends it
// SIGINT delay after it is ready and returns its exit code and stderr.
func interrupt(t *testing.T, tmp string, delay time.Duration, args ...string) (int, string) {
	t.Helper()
	return signalChild(t, tmp, "", delay, nil, os.Interrupt, args...)
}

// interruptAt runs fluxpack with args in a child process as interrupt
// does, but sends it sig when it reaches phase (package testhook), where
// it waits for it: the same moment on every run.
func interruptAt(t *testing.T, tmp, phase string, sig os.Signal, args ...string) (int, string) {
	t.Helper()
	return signalChild(t, tmp, phase, 0, nil, sig, args...)
}

// interruptWhen runs fluxpack with args in a child process as interrupt
// does, but sends it SIGINT when at is closed.
func interruptWhen(t *testing.T, tmp string, at <-chan struct{}, args ...string) (int, string) {
	t.Helper()
	return signalChild(t, tmp, "", 0, at, os.Interrupt, args...)
}

func signalChild(t *testing.T, tmp, phase string, delay time.Duration, at <-chan struct{}, sig os.Signal, args ...string) (int, string) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	ready := filepath.Join(t.TempDir(), "ready")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw), readyEnv+"="+ready, "TMPDIR="+tmp, "DOCKER_CONFIG="+t.TempDir())
	if phase != "" {
		cmd.Env = append(cmd.Env, pauseEnv+"="+phase)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	code := func(err error) int {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	}
	// Wait for the child to be ready (a safety net of a minute, not a
	// measure: the child is ready in milliseconds, or has ended).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("fluxpack %s ended (exit %d) before it was ready to be interrupted (phase %q):\n%s", strings.Join(args, " "), code(err), phase, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("fluxpack %s never got ready (phase %q):\n%s", strings.Join(args, " "), phase, stderr.String())
		}
	}
	if at != nil {
		select {
		case <-at:
		case err := <-exited:
			t.Fatalf("fluxpack %s ended (exit %d) before the moment to interrupt it:\n%s", strings.Join(args, " "), code(err), stderr.String())
		}
	}
	time.Sleep(delay)
	_ = cmd.Process.Signal(sig)
	return code(<-exited), stderr.String()
}

// leftovers lists what is in dir (recursively), less the names keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "go-build") && !contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestInterruptLeavesNothing interrupts push (of a tree whose layer is
// spooled to $TMPDIR), pull (into a hidden directory beside the target)
// and fleet push at several moments: each exits 130, or 0 when it ended
// before the signal, and leaves no temporary file, no partial directory
// and no tag on a half-pushed artifact (a tag the registry committed as the
// signal came must pull whole).
func TestInterruptLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts child processes for seconds")
	}
	host := slowRegistry(t, 150*time.Millisecond)
	src := t.TempDir()
	big := make([]byte, 6<<20) // incompressible: the layer goes over the 4 MiB spool limit
	_, _ = rand.Read(big)
	require.NoError(t, os.WriteFile(filepath.Join(src, "blob.bin"), big, 0o644))
	testutil.WriteFiles(t, src, map[string]string{"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	// An artifact to pull, pushed whole first.
	_, stderr, code := run(t, "push", src, "oci://"+host+"/whole:v1")
	require.Equal(t, 0, code, stderr)
	fleetDirPath := fleetDir(t, host)

	for _, delay := range []time.Duration{100 * time.Millisecond, 1200 * time.Millisecond, 2500 * time.Millisecond} {
		t.Run("push after "+delay.String(), func(t *testing.T) {
			tmp := t.TempDir()
			tag := "p" + strings.TrimSuffix(delay.String(), "ms")
			code, stderr := interrupt(t, tmp, delay, "push", src, "oci://"+host+"/interrupted:"+tag)
			assert.Contains(t, []int{cli.ExitInterrupted, 0}, code, stderr)
			if code == cli.ExitInterrupted {
				assert.Contains(t, stderr, "interrupted")
				// The tag is written last, so it is either absent or names
				// the whole artifact: an interrupt can cancel the manifest's
				// PUT after the registry has committed it, but never a tag
				// on a half-pushed artifact.
				out, _, c := run(t, "list", "oci://"+host+"/interrupted", "-o", "json")
				if c == 0 && strings.Contains(out, `"`+tag+`"`) {
					dst := filepath.Join(t.TempDir(), "out")
					_, stderr, c := run(t, "pull", "oci://"+host+"/interrupted:"+tag, "-d", dst)
					require.Equal(t, 0, c, "the interrupted push left tag %s on an artifact that does not pull: %s", tag, stderr)
					got, err := os.ReadFile(filepath.Join(dst, "blob.bin"))
					require.NoError(t, err)
					assert.True(t, bytes.Equal(big, got), "tag %s names an artifact whose content differs from what was pushed", tag)
				}
			}
			assert.Empty(t, leftovers(t, tmp), "push left files in $TMPDIR")
		})
		t.Run("pull after "+delay.String(), func(t *testing.T) {
			tmp, parent := t.TempDir(), t.TempDir()
			code, stderr := interrupt(t, tmp, delay, "pull", "oci://"+host+"/whole:v1", "-d", filepath.Join(parent, "out"))
			assert.Contains(t, []int{cli.ExitInterrupted, 0}, code, stderr)
			keep := []string{}
			if code == 0 {
				keep = append(keep, "out")
			}
			assert.Empty(t, leftovers(t, parent, keep...), "pull left a partial directory")
			assert.Empty(t, leftovers(t, tmp), "pull left files in $TMPDIR")
		})
		t.Run("fleet push after "+delay.String(), func(t *testing.T) {
			tmp := t.TempDir()
			code, stderr := interrupt(t, tmp, delay, "push", "--fleet", filepath.Join(fleetDirPath, "fleet.yaml"))
			assert.Contains(t, []int{cli.ExitInterrupted, 0}, code, stderr)
			assert.Empty(t, leftovers(t, tmp), "fleet push left files in $TMPDIR")
		})
	}
}

// TestInterruptedPushCancelsUploads sends SIGINT to push while the
// registry holds its blob uploads: it exits 130, and has cancelled every
// upload session it opened (DELETE /v2/<name>/blobs/uploads/<id>), so the
// registry keeps no partial upload, as the README says.
func TestInterruptedPushCancelsUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts a child process")
	}
	tracker := testutil.NewUploadTracker(t, registry.New(registry.Logger(log.New(io.Discard, "", 0))), true)
	s := httptest.NewServer(tracker)
	t.Cleanup(s.Close)
	src := t.TempDir()
	testutil.WriteFiles(t, src, tree)
	held := tracker.HoldPatches()
	both := make(chan struct{}) // the config's and the layer's uploads held
	go func() {
		<-held
		<-held
		close(both)
	}()
	code, stderr := interruptWhen(t, t.TempDir(), both, "push", src, "oci://"+strings.TrimPrefix(s.URL, "http://")+"/platform:v1")
	assert.Equal(t, cli.ExitInterrupted, code, stderr)
	assert.Equal(t, 2, tracker.Cancelled(), "upload sessions cancelled")
	assert.Empty(t, tracker.Open(), "upload sessions the interrupted push left open on the registry")
}

// TestInterruptedWriteLeavesNothing interrupts every command that writes
// files (render, render --fleet, import --output-file, outputs -d, wake)
// at each phase of its write, with SIGINT or SIGTERM: once everything is
// rendered in memory, and once the files are written beside their place
// (testhook.Prepared, testhook.Staged). Each must exit 130 and leave its
// workspace as it was, byte for byte: no temporary file or directory, no
// directory it made, no half-replaced output, no secret file, whether the
// output is new or replaces an earlier one (which differs).
func TestInterruptedWriteLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fluxpack in child processes")
	}
	root := testutil.RepoRoot(t)
	type workspace struct {
		args   []string
		change func() // makes the next write differ from the first one's
	}
	// Each command's workspace is w: everything it reads and writes.
	commands := []struct {
		name   string
		phases []string
		setup  func(t *testing.T, w string) workspace
	}{
		{name: "render", phases: []string{testhook.Prepared, testhook.Staged}, setup: func(t *testing.T, w string) workspace {
			dir := fleetDir(t, "registry.example.com")
			tf := filepath.Join(w, "tf.json")
			require.NoError(t, os.WriteFile(tf, []byte(`{"domain": {"value": "a.example.com"}, "token": {"value": "t0", "sensitive": true}}`), 0o600))
			return workspace{
				args: []string{"render", "-f", filepath.Join(dir, "stack.yaml"), "--outputs", tf, "--secret-file", filepath.Join(w, "secrets", "platform.yaml"), "-d", filepath.Join(w, "out", "flux")},
				change: func() {
					require.NoError(t, os.WriteFile(tf, []byte(`{"domain": {"value": "b.example.com"}, "token": {"value": "t1", "sensitive": true}}`), 0o600))
				},
			}
		}},
		{name: "render --fleet", phases: []string{testhook.Prepared, testhook.Staged}, setup: func(t *testing.T, w string) workspace {
			dir := fleetDir(t, "registry.example.com")
			return workspace{
				args: []string{"render", "--fleet", filepath.Join(dir, "fleet.yaml"), "--secret-dir", filepath.Join(w, "secrets"), "-d", filepath.Join(w, "out", "clusters")},
				change: func() {
					for _, c := range []string{"staging", "prod"} {
						p := filepath.Join(dir, "terraform", c+".json")
						data, err := os.ReadFile(p)
						require.NoError(t, err)
						require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "eu-west", "us-east", 1)), 0o644))
					}
				},
			}
		}},
		{name: "import", phases: []string{testhook.Prepared, testhook.Staged}, setup: func(t *testing.T, w string) workspace {
			repo := filepath.Join(w, "repo")
			require.NoError(t, os.CopyFS(repo, os.DirFS(filepath.Join(root, "fluxrepo", "testdata", "repos", "opt-in"))))
			stack := filepath.Join(repo, "platform", "stack.yaml")
			return workspace{
				args:   []string{"import", filepath.Join(repo, "clusters", "prod"), "--root", repo, "--output-file", stack},
				change: func() { require.NoError(t, os.WriteFile(stack, []byte("# an earlier import\n"), 0o644)) },
			}
		}},
		{name: "outputs", phases: []string{testhook.Prepared}, setup: func(t *testing.T, w string) workspace {
			tf := filepath.Join(w, "tf.json")
			require.NoError(t, os.CopyFS(w, os.DirFS(filepath.Join(root, "outputs", "testdata", "outputs"))))
			require.NoError(t, os.Rename(filepath.Join(w, "terraform.json"), tf))
			return workspace{
				args: []string{"outputs", tf, "--name", "cluster-vars", "-d", filepath.Join(w, "vars", "prod")},
				change: func() {
					data, err := os.ReadFile(tf)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(tf, []byte(strings.Replace(string(data), "vpc-0a1b2c3d4e5f67890", "vpc-1", 1)), 0o644))
				},
			}
		}},
		{name: "wake", phases: []string{testhook.Prepared, testhook.Staged}, setup: func(t *testing.T, w string) workspace {
			repo := filepath.Join(w, "repo")
			require.NoError(t, os.CopyFS(repo, os.DirFS(filepath.Join(root, "fluxrepo", "testdata", "repos", "platform-hierarchy"))))
			entry := filepath.Join(repo, "clusters", "mycluster-0")
			return workspace{
				args: []string{"wake", entry, "--root", repo, "-d", filepath.Join(entry, "wake"), "--secret-file", filepath.Join(w, "secrets", "wake.yaml"), "--receiver-url", "http://receiver.example"},
				change: func() {
					apps := filepath.Join(entry, "apps.yaml")
					data, err := os.ReadFile(apps)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(apps, []byte(strings.Replace(string(data), "    - name: observability\n", "", 1)), 0o644))
				},
			}
		}},
	}
	for _, c := range commands {
		for _, phase := range c.phases {
			for _, again := range []bool{false, true} {
				var sig os.Signal = os.Interrupt
				if (phase == testhook.Staged) != again {
					sig = syscall.SIGTERM
				}
				name := c.name + " new"
				if again {
					name = c.name + " again"
				}
				t.Run(name+" "+phase+" "+sig.String(), func(t *testing.T) {
					w, tmp := t.TempDir(), t.TempDir()
					ws := c.setup(t, w)
					if again {
						_, stderr, code := run(t, ws.args...)
						require.Equal(t, cli.ExitOK, code, "the first, uninterrupted run: %s", stderr)
						ws.change()
					}
					before := snapshot(t, w)
					code, stderr := interruptAt(t, tmp, phase, sig, ws.args...)
					assert.Equal(t, cli.ExitInterrupted, code, "fluxpack %s, interrupted at %s: exit code; stderr:\n%s", strings.Join(ws.args, " "), phase, stderr)
					assert.Contains(t, stderr, "fluxpack: interrupted: ")
					assert.Empty(t, cmp.Diff(before, snapshot(t, w)), "fluxpack %s, interrupted at %s, changed its workspace (-before +after)", strings.Join(ws.args, " "), phase)
					assert.Empty(t, leftovers(t, tmp), "left files in $TMPDIR")
				})
			}
		}
	}
}
