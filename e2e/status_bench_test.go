//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/status"
)

// requestCounter counts the requests a client sends, by "VERB path"
// (WATCH for a list with watch=true).
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
	failed []string
	next   http.RoundTripper
}

func (rc *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	verb := r.Method
	if r.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	resp, err := rc.next.RoundTrip(r)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case err != nil:
		rc.failed = append(rc.failed, fmt.Sprintf("%s %s: %v", verb, r.URL.Path, err))
	case resp.StatusCode >= 300:
		// A refused request (client-go retries a 429 or a Retry-After)
		// is listed, not counted.
		rc.failed = append(rc.failed, fmt.Sprintf("%s %s: %s", verb, r.URL.Path, resp.Status))
	default:
		rc.counts[verb+" "+r.URL.Path]++
	}
	return resp, err
}

func (rc *requestCounter) take() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.counts
	rc.counts = map[string]int{}
	return out
}

// refused are the requests answered with an error status, then forgets
// them.
func (rc *requestCounter) refused() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.failed
	rc.failed = nil
	return out
}

// countingConfig is cfg with every request counted.
func countingConfig(cfg *rest.Config) (*rest.Config, *requestCounter) {
	rc := &requestCounter{counts: map[string]int{}}
	out := rest.CopyConfig(cfg)
	out.QPS, out.Burst = 1000, 1000
	out.WrapTransport = func(next http.RoundTripper) http.RoundTripper {
		rc.next = next
		return rc
	}
	return out, rc
}

// fleetSize is the number of Kustomizations of the status benchmark.
const fleetSize = 1000

// TestStatusBenchmark1000 is issue 43's benchmark (reported, not asserted
// in time): package status reading 1,000 Kustomizations (suspended, so
// that the controllers leave them be, in chains of 10 by dependsOn, their
// statuses written as the controllers would: Ready, failed, waiting) from
// a real kube-apiserver. It counts the requests of one Snapshot
// (discovery, then exactly one LIST per kind, no WATCH) and of a Watch
// (the same, then one WATCH per kind), runs testing.Benchmark on Snapshot,
// and, when the tests' prebuilt CLI is there ($FLUXPACK_TEST_BIN, make
// e2e), times `fluxpack status` from process start to exit.
func TestStatusBenchmark1000(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, Fast)
	makeFleet(t, c, fleetSize)

	cfg, rc := countingConfig(c.Config)
	w, err := status.New(cfg)
	require.NoError(t, err)
	rc.take()
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, snap.Layers, fleetSize)
	lists, watches := splitRequests(rc.take())
	if r := rc.refused(); len(r) > 0 {
		t.Logf("requests refused (and retried by client-go): %v", r)
	}
	require.Contains(t, lists, "/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations")
	for path, n := range lists {
		assert.Equal(t, 1, n, "Snapshot listed %s %d times", path, n)
	}
	assert.Empty(t, watches, "Snapshot watched")
	kinds := len(lists)

	ctx, cancel := context.WithCancel(t.Context())
	snaps, err := w.Watch(ctx)
	require.NoError(t, err)
	first := <-snaps
	require.Len(t, first.Layers, fleetSize)
	time.Sleep(time.Second) // let every watch open; nothing changes meanwhile
	lists, watches = splitRequests(rc.take())
	if r := rc.refused(); len(r) > 0 {
		t.Logf("requests refused (and retried by client-go): %v", r)
	}
	cancel()
	for range snaps { //nolint:revive // drain
	}
	assert.Len(t, lists, kinds, "Watch listed other kinds than Snapshot: %v", lists)
	for path, n := range lists {
		assert.Equal(t, 1, n, "Watch listed %s %d times", path, n)
	}
	assert.Len(t, watches, kinds, "Watch opened a watch per kind: %v", watches)
	for path, n := range watches {
		assert.Equal(t, 1, n, "Watch watched %s %d times: polling?", path, n)
	}

	res := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			w, err := status.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			s, err := w.Snapshot(t.Context())
			if err != nil || len(s.Layers) != fleetSize {
				b.Fatalf("snapshot: %v (%d layers)", err, len(s.Layers))
			}
			_ = s.Blocking()
		}
	})
	rc.take()
	line := fmt.Sprintf("status of %d Kustomizations: Snapshot %s/op (%d runs, %d allocs/op, %s/op), one LIST per kind (%d kinds), Watch one WATCH per kind",
		fleetSize, time.Duration(res.NsPerOp()).Round(time.Millisecond), res.N, res.AllocsPerOp(), byteSize(res.AllocedBytesPerOp()), kinds)
	if bin := os.Getenv("FLUXPACK_TEST_BIN"); bin != "" {
		start := time.Now()
		cmd := exec.CommandContext(t.Context(), filepath.Join(bin, "fluxpack"), "status", "--kubeconfig", c.path("kubeconfig"), "-o", "json")
		out, err := cmd.Output()
		require.NoError(t, err, "fluxpack status")
		require.Contains(t, string(out), `"name": "k-0999"`)
		line += fmt.Sprintf("; `fluxpack status -o json` ($FLUXPACK_TEST_BIN) %s from process start to exit", time.Since(start).Round(time.Millisecond))
	}
	t.Log(line)
	recordSummary("status", line)
}

func byteSize(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func splitRequests(counts map[string]int) (lists, watches map[string]int) {
	lists, watches = map[string]int{}, map[string]int{}
	for k, n := range counts {
		verb, path, _ := strings.Cut(k, " ")
		switch {
		case verb == "WATCH":
			watches[path] = n
		case verb == "GET" && strings.Count(strings.TrimPrefix(path, "/apis/"), "/") >= 2:
			lists[path] = n // a collection, not discovery
		}
	}
	return lists, watches
}

// makeFleet creates n suspended Kustomizations k-0000… in chains of 10
// (each depends on the previous of its chain) and writes their statuses:
// most Ready, every 20th failed on a webhook, and those after it waiting.
func makeFleet(t *testing.T, c *Cluster, n int) {
	t.Helper()
	rev := "main@sha256:" + strings.Repeat("a", 64)
	now := metav1.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				k := &kustomizev1.Kustomization{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("k-%04d", i), Namespace: fluxNamespace},
					Spec: kustomizev1.KustomizationSpec{
						Interval:  metav1.Duration{Duration: time.Hour},
						Path:      "./",
						Prune:     true,
						Suspend:   true,
						SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: rootName},
					},
				}
				if i%10 != 0 {
					k.Spec.DependsOn = []kustomizev1.DependencyReference{{Name: fmt.Sprintf("k-%04d", i-1)}}
				}
				if err := c.Client.Create(t.Context(), k); err != nil {
					errs <- err
					continue
				}
				// A merge patch: kustomize-controller adds its finalizer
				// meanwhile, and the patch does not carry the version.
				patch := client.MergeFrom(k.DeepCopy())
				ready := metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.ReconciliationSucceededReason, Message: "Applied revision: " + rev, LastTransitionTime: now}
				switch {
				case i%20 == 5:
					ready = metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: meta.ReconciliationFailedReason,
						Message: `failed calling webhook "v.example.io": connect: connection refused`, LastTransitionTime: now}
				case i%20 > 5 && i%10 != 0 && i%20 < 10:
					ready = metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: meta.DependencyNotReadyReason,
						Message: fmt.Sprintf("dependency 'flux-system/k-%04d' is not ready", i-1), LastTransitionTime: now}
				default:
					k.Status.LastAppliedRevision = rev
				}
				k.Status.LastAttemptedRevision = rev
				k.Status.ObservedGeneration = k.Generation
				k.Status.Conditions = []metav1.Condition{ready}
				if err := c.Client.Status().Patch(t.Context(), k, patch); err != nil {
					errs <- err
				}
			}
		}()
	}
	start := time.Now()
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	var all []string
	for err := range errs {
		all = append(all, err.Error())
	}
	slices.Sort(all)
	require.Empty(t, all, "creating the Kustomizations")
	t.Logf("%d Kustomizations created with their statuses in %s", n, time.Since(start).Round(time.Millisecond))
}
