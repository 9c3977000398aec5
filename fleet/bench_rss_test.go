//go:build linux

package fleet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// BenchmarkFleetPushRSS runs `fluxpack push --fleet` in a process of its
// own (through bench/maxrss), every cluster new content, for 100 and 1,000
// clusters at --jobs 4 and for 1,000 at --jobs 16, and reports the largest
// peak RSS seen (peak-RSS-MiB): memory should follow --jobs, not the
// fleet's size. "floor" is `fluxpack version`: the binary and runtime's
// own RSS, which the rows subtract.
func BenchmarkFleetPushRSS(b *testing.B) {
	host := benchRegistry(b)
	bins := testutil.BenchBinaries(b, map[string]string{"fluxpack": "./cmd/fluxpack", "maxrss": "./bench/maxrss"})
	b.Run("floor", func(b *testing.B) {
		var peak int64
		for b.Loop() {
			peak = max(peak, testutil.PeakRSS(b, bins["maxrss"], bins["fluxpack"], "version"))
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
				peak = max(peak, testutil.PeakRSS(b, bins["maxrss"], bins["fluxpack"], "push", "--fleet", file, "--jobs", fmt.Sprint(tc.jobs), "--insecure-registry", "-o", "json"))
				os.Remove(file)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		})
	}
}
