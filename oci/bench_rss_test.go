//go:build linux

package oci_test

import (
	"fmt"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// BenchmarkPushRSS pushes the 5,000-file tree, new content every time, with
// `fluxpack push` and with Flux's Client.Push (bench/fluxpush), each in a
// child process, and reports the largest peak RSS seen (peak-RSS-MiB) and
// the compressed layer's size (layer-MiB). The "-1file" runs push a one-file
// tree: the constant the goal allows (runtime, binary, HTTP client).
func BenchmarkPushRSS(b *testing.B) {
	dir := benchTree(b)
	host := benchRegistry(b)
	bins := testutil.BenchBinaries(b, map[string]string{"fluxpack": "./cmd/fluxpack", "fluxpush": "./bench/fluxpush", "maxrss": "./bench/maxrss"})
	art, err := oci.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	layers, err := art.Image.Layers()
	if err != nil {
		b.Fatal(err)
	}
	layerSize, err := layers[0].Size()
	if err != nil {
		b.Fatal(err)
	}
	tiny := b.TempDir()
	testutil.WriteFiles(b, tiny, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n"})

	cases := []struct {
		name string
		dir  string
		args func(i int) []string
	}{
		{"fluxpack", dir, func(i int) []string {
			return []string{bins["fluxpack"], "push", dir, fmt.Sprintf("oci://%s/rss:new", host), "--revision", fmt.Sprint(i)}
		}},
		{"flux", dir, func(int) []string { return []string{bins["fluxpush"], dir, host + "/rss-flux:new"} }},
		{"fluxpack-1file", tiny, func(i int) []string {
			return []string{bins["fluxpack"], "push", tiny, fmt.Sprintf("oci://%s/rss-tiny:new", host), "--revision", fmt.Sprint(i)}
		}},
		{"flux-1file", tiny, func(int) []string { return []string{bins["fluxpush"], tiny, host + "/rss-flux-tiny:new"} }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var peak int64
			i := 0
			for b.Loop() {
				i++
				touch(b, tc.dir, 2_000_000+i) // new content: the layer is uploaded
				args := tc.args(i)
				peak = max(peak, testutil.PeakRSS(b, bins["maxrss"], args...))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			if tc.dir == dir {
				b.ReportMetric(float64(layerSize)/(1<<20), "layer-MiB")
			}
		})
	}
}
