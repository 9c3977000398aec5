package main

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		procs int
		line  string
		bench string
		want  map[string]float64 // nil: the line is not a result
	}{
		{"result", 2, "BenchmarkBuild/flux-2   \t 1\t1175477252 ns/op", "BenchmarkBuild/flux", map[string]float64{"ns/op": 1175477252}},
		{"custom units", 2, "BenchmarkPushRSS/fluxpack-1file-2 7 214128007 ns/op 15.14 peak-RSS-MiB", "BenchmarkPushRSS/fluxpack-1file", map[string]float64{"ns/op": 214128007, "peak-RSS-MiB": 15.14}},
		{"one CPU: no suffix", 1, "BenchmarkPreview/objects-1000 3 5 ns/op", "BenchmarkPreview/objects-1000", map[string]float64{"ns/op": 5}},
		{"failure", 2, "--- FAIL: BenchmarkBuild", "BenchmarkBuild", nil},
		{"log line", 2, "BenchmarkBuild/flux-2 says hello", "BenchmarkBuild/flux", nil},
		{"odd fields", 2, "BenchmarkBuild/flux-2 1 5 ns/op 7", "BenchmarkBuild/flux", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newResults(tt.procs)
			r.parse(tt.line)
			if tt.want == nil {
				assert.Empty(t, r.runs, "parse(%q)", tt.line)
				return
			}
			assert.Equal(t, []map[string]float64{tt.want}, r.runs[tt.bench], "parse(%q)", tt.line)
		})
	}
}

func TestMedian(t *testing.T) {
	assert.InDelta(t, 2.0, median([]float64{3, 1, 2}), 0)
	assert.InDelta(t, 2.5, median([]float64{4, 1, 3, 2}), 0)
	assert.InDelta(t, 7.0, median([]float64{7}), 0)
}

// TestTable prints the table of a recorded run: rows whose benchmarks did not
// run say so, goals hold or are missed on the medians.
func TestTable(t *testing.T) {
	f, err := os.Open("testdata/bench.txt")
	require.NoError(t, err)
	defer f.Close()
	r := newResults(2)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r.parse(sc.Text())
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, "Oxide Virtual Turin-like Processor", r.cpu)

	var out bytes.Buffer
	m := machine{cores: 2, cpu: r.cpu, goVersion: "go1.27.4", goos: "linux", goarch: "amd64", load: "1.50", count: 3, benchtime: "1s"}
	printTable(&out, m, r, rows)
	testutil.Golden(t, "table", out.Bytes())
}
