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
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
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
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	ready := filepath.Join(t.TempDir(), "ready")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw), readyEnv+"="+ready, "TMPDIR="+tmp, "DOCKER_CONFIG="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 30*time.Second, 5*time.Millisecond, "the child never got ready")
	time.Sleep(delay)
	_ = cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stderr.String()
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
// and no tag on a half-pushed artifact.
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
				_, _, c := run(t, "list", "oci://"+host+"/interrupted", "-o", "json")
				if c == 0 {
					out, _, _ := run(t, "list", "oci://"+host+"/interrupted", "-o", "json")
					assert.NotContains(t, out, `"`+tag+`"`, "an interrupted push moved its tag")
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
