package oci_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// BenchmarkPushUnchangedCLI times an unchanged push of the 5,000-file tree
// as whole processes, start-up included: `fluxpack push` (built as the
// release is, its tree cache in a temporary $XDG_CACHE_HOME, as the CLI
// keeps one) beside `flux push artifact --reproducible` of the same tree
// to the same registry (the flux CLI that hack/tools.sh builds: make
// flux-tool). Two runs of each go first, untimed: the first push, and the
// one that fills fluxpack's cache (the tree is older than the cache's
// two-second window by then). Every timed fluxpack run must say
// "unchanged". CPU-ms/op is the children's user plus system time.
func BenchmarkPushUnchangedCLI(b *testing.B) {
	dir := benchTree(b)
	host := benchRegistry(b)
	bins := testutil.BenchBinaries(b, map[string]string{"fluxpack": "./cmd/fluxpack"})
	flux := testutil.Tool(b, "flux")
	touch(b, dir, 3_000_000)
	waitSettled(b, dir)
	env := append(os.Environ(), "XDG_CACHE_HOME="+b.TempDir())
	cases := []struct {
		name      string
		args      []string
		unchanged string // what stderr must say of a timed run
	}{
		{"fluxpack", []string{bins["fluxpack"], "push", dir, fmt.Sprintf("oci://%s/cli-fluxpack:same", host)}, "unchanged"},
		{"flux", []string{flux, "push", "artifact", fmt.Sprintf("oci://%s/cli-flux:same", host), "--path", dir,
			"--source", "bench", "--revision", "bench", "--reproducible"}, ""},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for range 2 {
				runProcess(b, env, tc.args)
			}
			var cpu time.Duration
			for b.Loop() {
				used, stderr := runProcess(b, env, tc.args)
				if !strings.Contains(stderr, tc.unchanged) {
					b.Fatalf("%s: want %q on stderr, got:\n%s", strings.Join(tc.args, " "), tc.unchanged, stderr)
				}
				cpu += used
			}
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "CPU-ms/op")
		})
	}
}

// runProcess runs args and returns the CPU time it used and its stderr.
func runProcess(b *testing.B, env, args []string) (time.Duration, string) {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), stderr.String()
}
