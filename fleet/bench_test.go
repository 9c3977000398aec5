package fleet_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// benchLayers is the size of the benchmarks' stack: ten layers of three
// files of three objects each.
const benchLayers = 10

// benchFleetSizes are the fleets the benchmarks push: the larger ÷ the
// smaller is how the time grows.
var benchFleetSizes = []int{100, 1000}

// benchJobs is fleet.Push's Jobs in the timed benchmarks: the CLI's
// default.
const benchJobs = fleet.DefaultJobs

var (
	benchFleetsMu sync.Mutex
	benchFleets   = map[int]benchFleet{}
	// runs numbers the repositories of new-content runs across every call
	// of the benchmark functions, so no two runs push to the same one.
	runs atomic.Int64
)

// benchFleet is a generated fleet: its folder and its fleet file's text,
// with "HOST/REPO" standing for where the artifacts go.
type benchFleet struct {
	dir, file string
	data      string
}

// generatedFleet writes the fleet of n clusters once per test binary.
func generatedFleet(b *testing.B, n int) benchFleet {
	b.Helper()
	benchFleetsMu.Lock()
	defer benchFleetsMu.Unlock()
	if f, ok := benchFleets[n]; ok {
		return f
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("fluxpack-fleet-%d-", n))
	if err != nil {
		b.Fatal(err)
	}
	file, err := testutil.GenerateFleet(dir, n, benchLayers, "oci://HOST/REPO/{{cluster}}:main", 19)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	f := benchFleet{dir: dir, file: file, data: string(data)}
	benchFleets[n] = f
	return f
}

// load parses the fleet with its artifacts at host/repo/<cluster>:main.
func (f benchFleet) load(b *testing.B, host, repo string) *fleet.Fleet {
	b.Helper()
	fl, err := fleet.Parse(f.file, []byte(f.at(host, repo)))
	if err != nil {
		b.Fatal(err)
	}
	return fl
}

func (f benchFleet) at(host, repo string) string {
	return strings.Replace(f.data, "oci://HOST/REPO/", "oci://"+host+"/"+repo+"/", 1)
}

// benchRegistry is the real distribution server when it is built (or
// FLUXPACK_REQUIRE_REAL=1 demands it), else the in-process one.
func benchRegistry(b *testing.B) string {
	b.Helper()
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(b), ".cache", "bin", "registry")); err == nil || os.Getenv("FLUXPACK_TOOLS") != "" || os.Getenv("FLUXPACK_REQUIRE_REAL") == "1" {
		return testutil.StartDistribution(b, testutil.DistributionOptions{}).Host
	}
	b.Log("real registry not built (make tools): using the in-process registry")
	return testutil.NewRegistry(b).Host
}

// cpuMeter reports the process's CPU time per iteration (CPU-ms/op) once
// b.Loop is done: fleet.Push's and the counting proxy's, not the
// registry's.
func cpuMeter(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used)/float64(time.Millisecond)/float64(b.N), "CPU-ms/op")
		}
	}
}

// reportRequests reports what the registry served per cluster and run, by
// kind (manifest-GET/cluster, blob-upload/cluster, …), and returns the
// counts per run.
func reportRequests(b *testing.B, c testutil.RequestCounts, clusters int) {
	b.Helper()
	per := float64(b.N * clusters)
	for _, k := range testutil.RequestKinds {
		b.ReportMetric(float64(c[k])/per, string(k)+"/cluster")
	}
	b.ReportMetric(float64(c.Total())/per, "requests/cluster")
}

// BenchmarkFleetPush renders and pushes a generated fleet (ten layers of a
// few manifests, each cluster its own outputs file) of 100 and 1,000
// clusters with fleet.Push, Jobs(4), through a counting proxy in front of
// the real registry server: "new" pushes every cluster to repositories of
// their own (the first run), "unchanged" pushes a fleet the registry holds
// already. The requests the registry served are reported per cluster, by
// kind; an unchanged run that uploads a blob or writes a manifest fails.
func BenchmarkFleetPush(b *testing.B) {
	host := benchRegistry(b)
	for _, n := range benchFleetSizes {
		f := generatedFleet(b, n)
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			proxy := testutil.NewCountingProxy(b, host)
			b.Run("new", func(b *testing.B) {
				proxy.Reset()
				report := cpuMeter(b)
				for b.Loop() {
					fl := f.load(b, proxy.Host, fmt.Sprintf("new-%d", runs.Add(1)))
					res, err := fleet.Push(b.Context(), fl, fleet.Jobs(benchJobs))
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Status != fleet.Pushed {
							b.Fatalf("%s: %s on a first push", r.Cluster, r.Status)
						}
					}
				}
				report()
				reportRequests(b, proxy.Counts(), n)
			})
			// The fleet the unchanged runs push again, pushed once.
			repo := fmt.Sprintf("same-%d", runs.Add(1))
			if _, err := fleet.Push(b.Context(), f.load(b, proxy.Host, repo), fleet.Jobs(benchJobs)); err != nil {
				b.Fatal(err)
			}
			b.Run("unchanged", func(b *testing.B) {
				proxy.Reset()
				report := cpuMeter(b)
				for b.Loop() {
					res, err := fleet.Push(b.Context(), f.load(b, proxy.Host, repo), fleet.Jobs(benchJobs))
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Status != fleet.Unchanged {
							b.Fatalf("%s: %s on an unchanged push", r.Cluster, r.Status)
						}
					}
				}
				report()
				c := proxy.Counts()
				reportRequests(b, c, n)
				if writes := c[testutil.ReqBlobUpload] + c[testutil.ReqTagPUT] + c[testutil.ReqDigestPUT]; writes > 0 {
					b.Fatalf("an unchanged fleet wrote to the registry: %s", c)
				}
				b.Logf("unchanged fleet of %d clusters, %d runs: %s", n, b.N, c)
			})
		})
	}
}
