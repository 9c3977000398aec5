// Command bootstrapbench prints the table of `make bootstrap-bench`: for
// each layout of the e2e, the wall time of every run with stock flags, the
// worst, the layout's critical path (the sum of the layers' own reconcile
// times on the chain that finished last, median over the stock runs), the
// worst over it, the median with --requeue-dependency=1s, the worst over
// that, when the root OCIRepository had its artifact and when the root
// Kustomization started (medians: the time before the first layer that
// no layer's reconcile accounts for), and the failed reconciles of all
// runs; then the machine's load during each run. Issue 44's goals: worst ≤ 1.2× the critical path and
// ≤ 1.3× the fast median, 0 failed.
//
// It reads a folder written by hack/bootstrap-bench.sh: figures-N.jsonl,
// the JSON lines the e2e appends to $FLUXPACK_E2E_FIGURES in run N (one
// per layout and mode), and load-N.txt, the `uptime` lines before and
// after run N.
//
//	go run ./hack/bootstrapbench DIR
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// record is one line of $FLUXPACK_E2E_FIGURES (e2e/case_test.go's
// figuresRecord), in seconds.
type record struct {
	Layout       string  `json:"layout"`
	Mode         string  `json:"mode"`
	Ready        float64 `json:"ready"`
	CriticalPath float64 `json:"criticalPath"`
	Failed       int     `json:"failed"`
	SourceReady  float64 `json:"sourceReady"`
	RootStarted  float64 `json:"rootStarted"`
}

// run is what one run of the e2e left.
type run struct {
	N       int
	Records []record
	Load    []string // uptime before and after
}

// Goals of issue 44.
const (
	goalOverCP   = 1.2
	goalOverFast = 1.3
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bootstrapbench DIR")
		os.Exit(2)
	}
	runs, err := readRuns(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bootstrapbench:", err)
		os.Exit(1)
	}
	if err := writeTable(os.Stdout, runs); err != nil {
		fmt.Fprintln(os.Stderr, "bootstrapbench:", err)
		os.Exit(1)
	}
}

// readRuns reads figures-N.jsonl and load-N.txt of dir, by N.
func readRuns(dir string) ([]run, error) {
	files, err := filepath.Glob(filepath.Join(dir, "figures-*.jsonl"))
	if err != nil {
		return nil, err
	}
	var runs []run
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "figures-"), ".jsonl"))
		if err != nil {
			continue
		}
		r := run{N: n}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var rec record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				return nil, fmt.Errorf("reading %s: %w", f, err)
			}
			r.Records = append(r.Records, rec)
		}
		if load, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("load-%d.txt", n))); err == nil {
			for l := range strings.SplitSeq(strings.TrimSpace(string(load)), "\n") {
				r.Load = append(r.Load, strings.TrimSpace(l))
			}
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no figures-N.jsonl in %s", dir)
	}
	slices.SortFunc(runs, func(a, b run) int { return a.N - b.N })
	return runs, nil
}

// row is one layout's line of the table.
type row struct {
	Layout     string
	Walls      []float64 // stock, by run
	Worst      float64
	CP         float64 // median of the stock runs' critical paths
	MaxOwn     float64 // the highest wall ÷ that run's own critical path
	Source     float64 // median of the stock runs' root source Ready
	RootStart  float64 // median of the stock runs' root start
	FastMedian float64
	Failed     int
	FastRuns   int
}

func rows(runs []run) []row {
	byLayout := map[string]*row{}
	cps, roots, sources, fast := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for _, r := range runs {
		for _, rec := range r.Records {
			x := byLayout[rec.Layout]
			if x == nil {
				x = &row{Layout: rec.Layout}
				byLayout[rec.Layout] = x
			}
			x.Failed += rec.Failed
			switch rec.Mode {
			case "stock":
				x.Walls = append(x.Walls, rec.Ready)
				x.Worst = max(x.Worst, rec.Ready)
				cps[rec.Layout] = append(cps[rec.Layout], rec.CriticalPath)
				roots[rec.Layout] = append(roots[rec.Layout], rec.RootStarted)
				sources[rec.Layout] = append(sources[rec.Layout], rec.SourceReady)
				if rec.CriticalPath > 0 {
					x.MaxOwn = max(x.MaxOwn, rec.Ready/rec.CriticalPath)
				}
			case "fast":
				fast[rec.Layout] = append(fast[rec.Layout], rec.Ready)
			}
		}
	}
	var out []row
	for _, name := range slices.Sorted(maps.Keys(byLayout)) {
		x := byLayout[name]
		x.CP = median(cps[name])
		x.RootStart = median(roots[name])
		x.Source = median(sources[name])
		x.FastMedian = median(fast[name])
		x.FastRuns = len(fast[name])
		out = append(out, *x)
	}
	return out
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func verdict(r, goal float64) string {
	if r == 0 {
		return ""
	}
	if r <= goal {
		return " ok"
	}
	return " MISSED"
}

// writeTable prints the table and the load of each run.
func writeTable(w io.Writer, runs []run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs; stock flags, the fast median with --requeue-dependency=1s; seconds from applying the root objects\n", len(runs))
	fmt.Fprintf(&b, "goals (issue 44): worst ≤ %.1f× the critical path, ≤ %.1f× the fast median, 0 failed\n\n", goalOverCP, goalOverFast)
	fmt.Fprintf(&b, "%-20s %-40s %6s %6s %-13s %11s %7s %-13s %6s %10s %6s\n",
		"layout", "stock wall, each run", "worst", "CP", "worst÷CP", "max wall÷CP", "fast", "worst÷fast", "source", "root start", "failed")
	for _, x := range rows(runs) {
		walls := make([]string, len(x.Walls))
		for i, v := range x.Walls {
			walls[i] = fmt.Sprintf("%.1f", v)
		}
		overCP, overFast := 0.0, 0.0
		if x.CP > 0 {
			overCP = x.Worst / x.CP
		}
		if x.FastMedian > 0 {
			overFast = x.Worst / x.FastMedian
		}
		fastCol := "-"
		if x.FastRuns > 0 {
			fastCol = fmt.Sprintf("%.1f", x.FastMedian)
		}
		fmt.Fprintf(&b, "%-20s %-40s %6.1f %6.1f %-13s %11.2f %7s %-13s %6.1f %10.1f %6d\n",
			x.Layout, strings.Join(walls, " "), x.Worst, x.CP,
			ratio(x.Worst, x.CP)+verdict(overCP, goalOverCP), x.MaxOwn,
			fastCol, ratio(x.Worst, x.FastMedian)+verdict(overFast, goalOverFast), x.Source, x.RootStart, x.Failed)
	}
	b.WriteString("\nload (uptime) before and after each run:\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "  run %d: %s\n", r.N, strings.Join(r.Load, "  →  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
