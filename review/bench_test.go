package review_test

import (
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/review"
)

// BenchmarkReview measures diff ENTRY on a generated repository of 200
// Kustomizations / 20,000 objects whose change edits one file (one
// object's replicas), beside one side's render (the tree read, every
// Kustomization rendered: what a render-and-diff tool does per side):
//
//	go test ./review -run '^$' -bench Review -benchtime 3x
//
// Each reports the peak of live heap objects during the run
// (peak-heap-MiB).
func BenchmarkReview(b *testing.B) {
	dir := b.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	if _, _, err := testutil.GenerateRepository(base, 200, 20000, 1); err != nil {
		b.Fatal(err)
	}
	if err := os.CopyFS(head, os.DirFS(base)); err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(head, "layer-0100", "objects-000.yaml")
	data, err := os.ReadFile(changed)
	if err != nil {
		b.Fatal(err)
	}
	edited := strings.Replace(string(data), "replicas: ", "replicas: 1", 1)
	if edited == string(data) {
		b.Fatal("the generated file has no replicas to edit")
	}
	if err := os.WriteFile(changed, []byte(edited), 0o644); err != nil {
		b.Fatal(err)
	}
	entry := "clusters/bench"
	b.Run("render", func(b *testing.B) {
		peak := heapPeak(b)
		for b.Loop() {
			repo, err := fluxrepo.Read(b.Context(), filepath.Join(head, entry), fluxrepo.WithRoot(head))
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range repo.Plan.Layers {
				if _, err := repo.Render(b.Context(), l.Name); err != nil {
					b.Fatal(err)
				}
			}
			_ = repo.Close()
		}
		peak()
	})
	for _, tc := range []struct {
		name string
		opts []review.Option
		want int // producers rendered
	}{
		{"full", []review.Option{review.WithAll()}, 201},
		{"changed-only", nil, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			peak := heapPeak(b)
			for b.Loop() {
				r, err := review.Compare(b.Context(), base, head, entry, tc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Objects) != 1 || len(r.Rendered) != tc.want {
					b.Fatalf("%d objects changed, %d producers rendered; want 1 and %d", len(r.Objects), len(r.Rendered), tc.want)
				}
			}
			peak()
		})
	}
}

// heapPeak samples the live heap every 5 ms until the returned function
// is called, which reports the peak.
func heapPeak(b *testing.B) func() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}
