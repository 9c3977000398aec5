package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// results holds what `go test -bench` printed: every run of every benchmark.
type results struct {
	procs int    // the -cpu value, which go test appends to names as "-N"
	cpu   string // the "cpu:" header
	// runs maps a benchmark name (without the -N suffix) to its runs, in
	// order, each a map from unit ("ns/op", "peak-RSS-MiB", …) to value.
	runs map[string][]map[string]float64
}

func newResults(procs int) *results {
	return &results{procs: procs, runs: map[string][]map[string]float64{}}
}

// parse reads one line of go test's output; lines other than headers and
// benchmark results are ignored.
func (r *results) parse(line string) {
	if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
		r.cpu = strings.TrimSpace(cpu)
		return
	}
	if !strings.HasPrefix(line, "Benchmark") {
		return
	}
	f := strings.Fields(line)
	// name, iterations, then value-unit pairs.
	if len(f) < 4 || len(f)%2 != 0 {
		return
	}
	if _, err := strconv.Atoi(f[1]); err != nil {
		return
	}
	name := f[0]
	if r.procs > 1 {
		name = strings.TrimSuffix(name, fmt.Sprintf("-%d", r.procs))
	}
	run := map[string]float64{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return
		}
		run[f[i+1]] = v
	}
	r.runs[name] = append(r.runs[name], run)
}

// series returns the values of unit over the runs of a benchmark, or nil
// when it did not run.
func (r *results) series(bench, unit string) []float64 {
	var out []float64
	for _, run := range r.runs[bench] {
		if v, ok := run[unit]; ok {
			out = append(out, v)
		}
	}
	return out
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs must not be empty.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
