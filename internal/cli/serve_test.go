package cli_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// served is a `fluxpack registry serve` running in-process.
type served struct {
	addr  string // host:port, from its line on stderr
	line  string // that line
	stop  func() // cancels its context, as SIGINT does
	ended chan servedEnd
}

type servedEnd struct {
	code   int
	stderr string // after the first line
}

// startServe runs fluxpack with args (registry serve …) in-process with a
// context of its own, and returns once it has said on stderr where it
// listens. The test's cleanup stops it if the test has not.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	s := &served{stop: cancel, ended: make(chan servedEnd, 1)}
	code := make(chan int, 1)
	go func() {
		code <- cli.Main(ctx, "test", args, io.Discard, pw)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n') // the first line, or EOF when Main ended
	go func() {
		rest, _ := io.ReadAll(br)
		s.ended <- servedEnd{<-code, string(rest)}
	}()
	if err != nil {
		cancel()
		end := <-s.ended
		t.Fatalf("fluxpack %s ended (exit %d) before saying where it listens: %s%s", strings.Join(args, " "), end.code, line, end.stderr)
	}
	s.line = line
	const prefix = "serving an OCI registry on "
	require.True(t, strings.HasPrefix(line, prefix), "first line on stderr: %q", line)
	s.addr, _, _ = strings.Cut(strings.TrimPrefix(line, prefix), ",")
	t.Cleanup(cancel)
	return s
}

// end stops the registry as SIGINT does and returns its exit code and
// what it wrote to stderr after its first line.
func (s *served) end() (int, string) {
	s.stop()
	e := <-s.ended
	return e.code, e.stderr
}

// TestRegistryServe runs docs/oci.md's lines for `fluxpack registry serve`,
// which the README's tour shows too (TestReadmeTourPush), on a free port
// instead of 5000 and with --dir; it signs and verifies with a
// cosign key and with notation there, checks the blobs are files in the
// folder, stops the registry as Ctrl-C does (exit 0), and starts it again
// on the same folder: the blobs are there, the tags (in memory) are not.
func TestRegistryServe(t *testing.T) {
	lines := docBlock(t, "docs/oci.md", "sh", "# Shipping manifests as OCI artifacts", "fluxpack registry serve")
	work := t.TempDir()
	testutil.WriteFiles(t, work, prefixed("platform/", tree))
	t.Chdir(work)
	blobs := filepath.Join(t.TempDir(), "blobs")

	var reg *served
	ran := 0
	for _, line := range strings.Split(lines, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case len(fields) == 3 && strings.Join(fields, " ") == "fluxpack registry serve":
			reg = startServe(t, append(fields[1:], "--addr", "127.0.0.1:0", "--dir", blobs)...)
			assert.Contains(t, reg.line, "blobs in "+blobs+", manifests and tags in memory", "it says where the blobs are")
			assert.Contains(t, reg.line, "fluxpack push ./dir oci://"+reg.addr+"/platform:v1", "it says how to push to it")
		case fields[0] == "fluxpack" && reg != nil:
			for i, f := range fields {
				fields[i] = strings.Replace(f, "127.0.0.1:5000", reg.addr, 1)
			}
			stdout, stderr, code := run(t, fields[1:]...)
			require.Equal(t, cli.ExitOK, code, "%s\nstdout: %s\nstderr: %s", line, stdout, stderr)
			ran++
		default:
			t.Fatalf("the README's registry lines have one the test cannot run: %q", line)
		}
	}
	require.Equal(t, 2, ran, "push and pull ran")
	assert.Equal(t, tree, testutil.ReadFiles(t, filepath.Join(work, "out")), "pulled what was pushed")

	// Signing: a cosign key, then notation, each verified.
	url := "oci://" + reg.addr + "/platform"
	key, pub := testutil.CosignKeyPair(t, t.TempDir(), "hunter2")
	t.Setenv("COSIGN_PASSWORD", "hunter2")
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	meta := []string{"--source", "https://example.com/platform.git", "--revision", "main@sha1:" + strings.Repeat("1", 40)}
	for _, tt := range []cmdCase{
		{"push signed with cosign", append([]string{"push", "platform", url + ":cosign", "--sign", "cosign", "--key", key}, meta...), 0, reg.addr + "/platform@sha256:", "signed=true"},
		{"verify cosign", []string{"verify", url + ":cosign", "--key", pub}, 0, "verified: " + reg.addr + "/platform@sha256:", ""},
		{"push signed with notation", append([]string{"push", "platform", url + ":notation", "--sign", "notation", "--key", pki.Key, "--cert", pki.Chain}, meta...), 0, reg.addr + "/platform@sha256:", "signed=true"},
		{"verify notation", []string{"verify", url + ":notation", "--cert", pki.CA, "--trust-policy", pki.TrustPolicy}, 0, "verified: " + reg.addr + "/platform@sha256:", ""},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.check(t) })
	}

	// The blobs are files in the folder.
	entries, err := os.ReadDir(filepath.Join(blobs, "sha256"))
	require.NoError(t, err)
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, "sha256:"+e.Name())
	}
	require.NotEmpty(t, onDisk, "no blob in %s", blobs)

	code, rest := reg.end()
	assert.Equal(t, cli.ExitOK, code, "registry serve stopped by its context (SIGINT): exit code; stderr: %s", rest)

	// Started again on the folder: every blob is served, no tag is.
	again := startServe(t, "registry", "serve", "--addr", "127.0.0.1:0", "--dir", blobs)
	for _, d := range onDisk {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodHead, "http://"+again.addr+"/v2/platform/blobs/"+d, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "blob %s after the restart", d)
	}
	_, stderr, code := run(t, "pull", "oci://"+again.addr+"/platform:v1", "-d", filepath.Join(t.TempDir(), "lost"))
	assert.Equal(t, cli.ExitError, code, "tags are in memory: gone after the restart; stderr: %s", stderr)
	code, rest = again.end()
	assert.Equal(t, cli.ExitOK, code, rest)
}

// TestRegistryServeRefusesRemote: an address off loopback is refused,
// naming the flag that allows it, unless --allow-remote.
func TestRegistryServeRefusesRemote(t *testing.T) {
	for _, tt := range []cmdCase{
		{"every interface", []string{"registry", "serve", "--addr", ":5000"}, cli.ExitError, "", "every interface is not a loopback address"},
		{"unspecified", []string{"registry", "serve", "--addr", "0.0.0.0:5000"}, cli.ExitError, "", "(allow it with --allow-remote)"},
		{"bad address", []string{"registry", "serve", "--addr", "5000"}, cli.ExitError, "", `--addr: "5000": want host:port`},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.check(t) })
	}
}

// prefixed returns files with each path under prefix.
func prefixed(prefix string, files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for p, c := range files {
		out[prefix+p] = c
	}
	return out
}
