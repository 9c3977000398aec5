//go:build linux

package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

var (
	benchBinsOnce sync.Once
	benchBins     map[string]string // command name → path
	benchBinsErr  error
)

// buildBenchBins builds `fluxpack` and bench/maxrss once per test binary,
// with the toolchain that runs the test.
func buildBenchBins(b *testing.B) map[string]string {
	b.Helper()
	benchBinsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fluxpack-fleet-bin-")
		if err != nil {
			benchBinsErr = err
			return
		}
		bins := map[string]string{}
		for cmd, pkg := range map[string]string{"fluxpack": "./cmd/fluxpack", "maxrss": "./bench/maxrss"} {
			out := filepath.Join(dir, cmd)
			c := exec.Command("go", "build", "-o", out, pkg)
			c.Dir = testutil.RepoRoot(b)
			c.Env = append(os.Environ(), "GOTOOLCHAIN=auto")
			if msg, err := c.CombinedOutput(); err != nil {
				benchBinsErr = fmt.Errorf("building %s: %w\n%s", pkg, err, msg)
				return
			}
			bins[cmd] = out
		}
		benchBins = bins
	})
	if benchBinsErr != nil {
		b.Fatal(benchBinsErr)
	}
	return benchBins
}

// peakRSS runs a command through bench/maxrss and returns the command's
// peak resident set size in bytes.
func peakRSS(b *testing.B, maxrss string, args ...string) int64 {
	b.Helper()
	c := exec.Command(maxrss, args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", filepath.Base(args[0]), args[1:], err, stderr.Bytes())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("reading the peak RSS of %s: %v", filepath.Base(args[0]), err)
	}
	return kib << 10
}

// BenchmarkFleetPushRSS runs `fluxpack push --fleet` in a process of its
// own (through bench/maxrss), every cluster new content, for 100 and 1,000
// clusters at --jobs 4 and for 1,000 at --jobs 16, and reports the largest
// peak RSS seen (peak-RSS-MiB): memory should follow --jobs, not the
// fleet's size. "floor" is `fluxpack version`: the binary and runtime's
// own RSS, which the rows subtract.
func BenchmarkFleetPushRSS(b *testing.B) {
	host := benchRegistry(b)
	bins := buildBenchBins(b)
	b.Run("floor", func(b *testing.B) {
		var peak int64
		for b.Loop() {
			peak = max(peak, peakRSS(b, bins["maxrss"], bins["fluxpack"], "version"))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	})
	cases := []struct{ clusters, jobs int }{{100, 4}, {1000, 4}, {1000, 16}}
	for _, tc := range cases {
		f := generatedFleet(b, tc.clusters)
		b.Run(fmt.Sprintf("clusters=%d/jobs=%d", tc.clusters, tc.jobs), func(b *testing.B) {
			var peak int64
			for b.Loop() {
				// A fleet file of its own beside fleet.yaml (outside the
				// stack's folder), every cluster to a new repository.
				k := runs.Add(1)
				file := filepath.Join(f.dir, fmt.Sprintf("fleet-rss-%d.yaml", k))
				if err := os.WriteFile(file, []byte(f.at(host, fmt.Sprintf("rss-%d", k))), 0o644); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, peakRSS(b, bins["maxrss"], bins["fluxpack"], "push", "--fleet", file, "--jobs", fmt.Sprint(tc.jobs), "--insecure-registry", "-o", "json"))
				os.Remove(file)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		})
	}
}
