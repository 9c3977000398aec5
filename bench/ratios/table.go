package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// metric is one measured quantity: per-run values of a benchmark's unit, or
// a sum or difference of two such series taken run by run.
type metric struct {
	label string
	unit  string // "ns/op" or a custom unit such as "MiB"
	runs  func(*results) []float64
	// cpu, for a time, is the CPU time of the same runs (CPU-ms/op), when
	// the benchmark reports it.
	cpu func(*results) []float64
}

// cpuUnit is the custom unit of the benchmarks' CPU time per iteration.
const cpuUnit = "CPU-ms/op"

// bench is the unit of the runs of a benchmark.
func bench(label, name, unit string) metric {
	m := metric{label: label, unit: unit, runs: func(r *results) []float64 { return r.series(name, unit) }}
	if strings.HasSuffix(unit, "-MiB") {
		m.unit = mib
	}
	if unit == perOp {
		m.cpu = func(r *results) []float64 { return r.series(name, cpuUnit) }
	}
	return m
}

// combine applies op run by run to a and b (the shorter series bounds it).
func combine(label string, a, b metric, op func(x, y float64) float64) metric {
	m := metric{label: label, unit: a.unit, runs: pairwise(a.runs, b.runs, op)}
	if a.cpu != nil && b.cpu != nil {
		m.cpu = pairwise(a.cpu, b.cpu, op)
	}
	return m
}

func pairwise(a, b func(*results) []float64, op func(x, y float64) float64) func(*results) []float64 {
	return func(r *results) []float64 {
		xs, ys := a(r), b(r)
		out := make([]float64, min(len(xs), len(ys)))
		for i := range out {
			out[i] = op(xs[i], ys[i])
		}
		return out
	}
}

func plus(label string, a, b metric) metric {
	return combine(label, a, b, func(x, y float64) float64 { return x + y })
}

func minus(label string, a, b metric) metric {
	return combine(label, a, b, func(x, y float64) float64 { return x - y })
}

// row is one line of the table: ours ÷ peer, or ours alone against an
// absolute bound when peer is nil.
type row struct {
	work string
	ours metric
	peer *metric
	// maxRatio is the goal ratio (0: none, the peer is shown for reference).
	maxRatio float64
	// maxValue is an absolute goal in ours' unit, for rows without a peer.
	maxValue float64
	// atMost is an absolute goal that the median may reach (≤), zero
	// included, for rows without a peer: a count of requests, say.
	atMost *float64
	// note is added to the goal column, e.g. a goal checked elsewhere.
	note string
}

func peer(m metric) *metric { return &m }

func limit(v float64) *float64 { return &v }

// as gives m another label and unit (a sum of per-cluster counts, say).
func as(label, unit string, m metric) metric {
	m.label, m.unit = label, unit
	return m
}

// fleetRuns are the requests the registry served per cluster in a fleet
// push (BenchmarkFleetPush), of the kinds given, added up.
func fleetRuns(label, bench string, kinds ...string) metric {
	m := bench0(bench, kinds[0]+"/cluster")
	for _, k := range kinds[1:] {
		m = plus("", m, bench0(bench, k+"/cluster"))
	}
	return as(label, "/cluster", m)
}

// bench0 is bench without a label.
func bench0(name, unit string) metric { return bench("", name, unit) }

const (
	tree  = "5,000 files"
	mib   = "MiB"
	perOp = "ns/op"
)

// rows is the table: the OCI rows of package oci's benchmarks, then preview
// (package substitute) and build + lint (package layering). A "1/10 of the
// input" peer is the same benchmark on a tenth of the input: the ratio
// shows how the time grows.
var rows = []row{
	{work: "build layer, " + tree, ours: bench("fluxpack Build", "BenchmarkBuild/fluxpack", perOp),
		peer: peer(bench("Flux Client.Build", "BenchmarkBuild/flux", perOp)), note: "same tar stream (checked)"},
	{work: "", ours: bench("fluxpack Build", "BenchmarkBuild/fluxpack", perOp),
		peer: peer(bench("floor: compress/gzip -6 of the tar", "BenchmarkFloor/gzip-stdlib", perOp))},
	{work: "", ours: bench("fluxpack Build", "BenchmarkBuild/fluxpack", perOp),
		peer: peer(bench("floor: klauspost gzip -6 of the tar", "BenchmarkFloor/gzip-klauspost", perOp))},
	{work: "push, new content, " + tree, ours: bench("fluxpack Push", "BenchmarkPushNew/fluxpack", perOp),
		peer: peer(bench("Flux Client.Push", "BenchmarkPushNew/flux", perOp)), maxRatio: 0.5},
	{work: "", ours: bench("fluxpack Push", "BenchmarkPushNew/fluxpack", perOp),
		peer: peer(plus("floor: compress/gzip + raw blob upload", bench("", "BenchmarkFloor/gzip-stdlib", perOp), bench("", "BenchmarkFloor/blob-upload", perOp)))},
	{work: "push, unchanged content, " + tree, ours: bench("fluxpack Push", "BenchmarkPushUnchanged/fluxpack", perOp),
		peer: peer(bench("Flux Client.Push", "BenchmarkPushUnchanged/flux", perOp)), maxRatio: 0.15},
	{work: "", ours: bench("fluxpack Push", "BenchmarkPushUnchanged/fluxpack", perOp),
		peer: peer(bench("floor: tar + sha256 of the tree", "BenchmarkFloor/tar-sha256", perOp)), maxRatio: 1.5},
	{work: "", ours: bench("fluxpack Push, WithTreeCache", "BenchmarkPushUnchanged/fluxpack-cached", perOp),
		peer: peer(bench("Flux Client.Push", "BenchmarkPushUnchanged/flux", perOp)), maxRatio: 0.15, note: "one stat per file, no read"},
	{work: "push, unchanged content, " + tree + ", whole process", ours: bench("fluxpack push", "BenchmarkPushUnchangedCLI/fluxpack", perOp),
		peer: peer(bench("flux push artifact --reproducible", "BenchmarkPushUnchangedCLI/flux", perOp)), maxRatio: 0.15, note: "start-up included (issue 27)"},
	{work: "peak RSS, push new, " + tree, ours: bench("fluxpack push (process)", "BenchmarkPushRSS/fluxpack", "peak-RSS-MiB"),
		peer: peer(bench("flux Client.Push (process)", "BenchmarkPushRSS/flux", "peak-RSS-MiB"))},
	{work: "", ours: minus("fluxpack push − 1-file push", bench("", "BenchmarkPushRSS/fluxpack", "peak-RSS-MiB"), bench("", "BenchmarkPushRSS/fluxpack-1file", "peak-RSS-MiB")),
		peer: peer(bench("compressed layer size", "BenchmarkPushRSS/fluxpack", "layer-MiB")), maxRatio: 2},
	{work: "preview with substitution, 1,000 objects", ours: bench("fluxpack preview", "BenchmarkBuild/objects=1000", perOp),
		peer: peer(bench("Flux generator + SubstituteVariables", "BenchmarkFluxBuild/objects=1000", perOp)), note: "same output: TestBuildMatchesFlux"},
	{work: "preview with substitution, 3,000 objects", ours: bench("Flux generator + SubstituteVariables", "BenchmarkFluxBuild/objects=3000", perOp),
		peer: peer(bench("Flux, 1/3 of the input", "BenchmarkFluxBuild/objects=1000", perOp)), note: "Flux's growth, for reference"},
	{work: "preview with substitution, 10,000 objects", ours: bench("fluxpack preview", "BenchmarkBuild/objects=10000", perOp),
		maxValue: 1e9, note: "Flux 254 s (issue's figure; not run)"},
	{work: "", ours: bench("fluxpack preview", "BenchmarkBuild/objects=10000", perOp),
		peer: peer(bench("fluxpack preview, 1/10 of the input", "BenchmarkBuild/objects=1000", perOp)), maxRatio: 11},
	{work: "build + lint, 1,000 layers / 50,000 objects", ours: bench("fluxpack Build + Lint", "BenchmarkBuildLint/layers=1000", perOp),
		peer: peer(bench("floor: yaml.v3 decode of the manifests", "BenchmarkDecodeFloor/layers=1000", perOp)), maxRatio: 1.5},
	{work: "", ours: bench("fluxpack Build + Lint", "BenchmarkBuildLint/layers=1000", perOp),
		peer: peer(bench("fluxpack Build + Lint, 1/10 of the input", "BenchmarkBuildLint/layers=100", perOp)), maxRatio: 11},
	{work: "lint a Flux repository, 200 Kustomizations / 20,000 objects", ours: bench("fluxpack lint ENTRY", "BenchmarkLintRepository/layers=200", perOp),
		peer: peer(bench("the same objects as a stack file", "BenchmarkLintStackSameObjects/layers=200", perOp)), maxRatio: 1.2},
	{work: "", ours: bench("fluxpack lint ENTRY", "BenchmarkLintRepository/layers=200", perOp),
		peer: peer(bench("fluxpack lint ENTRY, 1/10 of the input", "BenchmarkLintRepository/layers=20", perOp)), maxRatio: 11},
	{work: "diff ENTRY, 200 Kustomizations / 20,000 objects, one file changed", ours: bench("changed-only (default)", "BenchmarkReview/changed-only", perOp),
		peer: peer(bench("--all", "BenchmarkReview/full", perOp)), maxRatio: 0.1},
	{work: "", ours: bench("--all: both sides read, rendered, linted, diffed", "BenchmarkReview/full", perOp),
		peer: peer(bench("one side rendered (read + every Kustomization)", "BenchmarkReview/render", perOp)), maxRatio: 2.5},
	{work: "", ours: bench0("BenchmarkReview/full", "peak-heap-MiB"),
		peer: peer(bench0("BenchmarkReview/render", "peak-heap-MiB")), maxRatio: 2},
	{work: "diff --base HEAD~1, home-ops shape (144 apps), one image bump, whole processes", ours: bench("fluxpack diff (changed-only), warm cache", "BenchmarkDiffBesideFlate/fluxpack", perOp),
		peer: peer(bench("flate diff ks --path-orig, warm cache", "BenchmarkDiffBesideFlate/flate-warm", perOp)), maxRatio: 1},
	{work: "", ours: bench("fluxpack diff (changed-only), new cache", "BenchmarkDiffBesideFlate/fluxpack-cold", perOp),
		peer: peer(bench("flate diff ks --path-orig, new cache", "BenchmarkDiffBesideFlate/flate-cold", perOp)), maxRatio: 1},
	{work: "", ours: bench("fluxpack diff (changed-only), warm cache", "BenchmarkDiffBesideFlate/fluxpack", perOp),
		peer: peer(bench("fluxpack diff --all, warm cache", "BenchmarkDiffBesideFlate/fluxpack-all", perOp)), maxRatio: 0.25},
	{work: "", ours: bench("fluxpack diff (changed-only), new cache", "BenchmarkDiffBesideFlate/fluxpack-cold", perOp),
		peer: peer(bench("fluxpack diff --all, new cache", "BenchmarkDiffBesideFlate/fluxpack-all-cold", perOp)), maxRatio: 0.25},
	{work: "", ours: bench("a change no layer reads (README), warm cache", "BenchmarkDiffBesideFlate/fluxpack-unread", perOp), maxValue: 0.3e9},
	{work: "", ours: bench("a change no layer reads (README), new cache", "BenchmarkDiffBesideFlate/fluxpack-unread-cold", perOp), maxValue: 0.3e9},
	{work: "fleet push, " + fleet + ", unchanged", ours: bench("fleet.Push again, nothing changed", fleetUnchanged, perOp),
		peer: peer(bench("fleet.Push, new content", fleetNew, perOp)), maxRatio: 0.1},
	{work: "", ours: fleetRuns("manifest reads (GET + HEAD)", fleetUnchanged, "manifest-GET", "manifest-HEAD"), atMost: limit(1)},
	{work: "", ours: fleetRuns("blob uploads + manifest PUTs", fleetUnchanged, "blob-upload", "tag-PUT", "digest-PUT"), atMost: limit(0)},
	{work: "", ours: fleetRuns("every request (GET /v2/ included)", fleetUnchanged, "ping", "manifest-GET", "manifest-HEAD", "tag-PUT", "digest-PUT", "blob-HEAD", "blob-GET", "blob-upload", "other")},
	{work: "fleet push, " + fleet + ", new", ours: bench("fleet.Push, new content", fleetNew, perOp),
		peer: peer(bench("fleet.Push, 1/10 of the clusters", "BenchmarkFleetPush/clusters=100/new", perOp)), maxRatio: 11},
	{work: "peak RSS, push --fleet, new, −binary's own", ours: minus("1,000 clusters, --jobs 4", bench0("BenchmarkFleetPushRSS/clusters=1000/jobs=4", "peak-RSS-MiB"), bench0("BenchmarkFleetPushRSS/floor", "peak-RSS-MiB")),
		peer: peer(minus("100 clusters, --jobs 4", bench0("BenchmarkFleetPushRSS/clusters=100/jobs=4", "peak-RSS-MiB"), bench0("BenchmarkFleetPushRSS/floor", "peak-RSS-MiB"))), maxRatio: 1.5},
	{work: "", ours: minus("1,000 clusters, --jobs 16", bench0("BenchmarkFleetPushRSS/clusters=1000/jobs=16", "peak-RSS-MiB"), bench0("BenchmarkFleetPushRSS/floor", "peak-RSS-MiB")),
		peer: peer(minus("1,000 clusters, --jobs 4", bench0("BenchmarkFleetPushRSS/clusters=1000/jobs=4", "peak-RSS-MiB"), bench0("BenchmarkFleetPushRSS/floor", "peak-RSS-MiB"))), note: "--jobs' share, for reference"},
	{work: "", ours: bench("binary's own: fluxpack version", "BenchmarkFleetPushRSS/floor", "peak-RSS-MiB")},
}

// The fleet rows' benchmarks: 1,000 clusters, the stack of
// testutil.GenerateFleet, through the counting proxy.
const (
	fleet          = "1,000 clusters × 10 layers"
	fleetNew       = "BenchmarkFleetPush/clusters=1000/new"
	fleetUnchanged = "BenchmarkFleetPush/clusters=1000/unchanged"
)

// machine is what the run ran on.
type machine struct {
	cores        int
	cpu          string
	goVersion    string
	goos, goarch string
	load         string
	count        int
	benchtime    string
}

func printTable(w io.Writer, m machine, r *results, rows []row) {
	fmt.Fprintf(w, "machine: %d cores, %s, %s %s/%s; load average %s at start; medians of %d runs (-benchtime %s)\n\n",
		m.cores, orUnknown(m.cpu), m.goVersion, m.goos, m.goarch, m.load, m.count, m.benchtime)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "work\tfluxpack\t\tpeer\t\tratio\truns\tCPU ratio\tgoal")
	for _, rw := range rows {
		ours := rw.ours.runs(r)
		cells := []string{rw.work, rw.ours.label, "", "", "", "", "", "", ""}
		if len(ours) == 0 {
			cells[2] = "not run"
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
			continue
		}
		cells[2] = format(median(ours), rw.ours.unit)
		switch {
		case rw.peer != nil:
			theirs := rw.peer.runs(r)
			cells[3] = rw.peer.label
			if len(theirs) == 0 {
				cells[4] = "not run"
				break
			}
			cells[4] = format(median(theirs), rw.peer.unit)
			ratio := median(ours) / median(theirs)
			cells[5] = fmt.Sprintf("%.2f", ratio)
			cells[6] = spread(ours, theirs)
			if rw.ours.cpu != nil && rw.peer.cpu != nil {
				if a, b := rw.ours.cpu(r), rw.peer.cpu(r); len(a) > 0 && len(b) > 0 {
					cells[7] = fmt.Sprintf("%.2f", median(a)/median(b))
				}
			}
			if rw.maxRatio > 0 {
				cells[8] = verdict(ratio, rw.maxRatio, fmt.Sprintf("≤ %.2f×", rw.maxRatio))
			}
		case rw.atMost != nil:
			cells[8] = verdict(median(ours), *rw.atMost, "≤ "+format(*rw.atMost, rw.ours.unit))
		case rw.maxValue > 0:
			cells[8] = verdict(median(ours), rw.maxValue, "< "+format(rw.maxValue, rw.ours.unit))
		}
		if rw.note != "" && cells[8] != "" {
			cells[8] += "; " + rw.note
		} else if rw.note != "" {
			cells[8] = rw.note
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for line := range strings.Lines(buf.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

// verdict returns the goal's text and whether got holds it.
func verdict(got, limit float64, goal string) string {
	if got <= limit {
		return goal + " holds"
	}
	return goal + " MISSED"
}

// spread is the range of the run-by-run ratios.
func spread(ours, theirs []float64) string {
	n := min(len(ours), len(theirs))
	if n < 2 {
		return ""
	}
	lo, hi := ours[0]/theirs[0], ours[0]/theirs[0]
	for i := 1; i < n; i++ {
		q := ours[i] / theirs[i]
		lo, hi = min(lo, q), max(hi, q)
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

func format(v float64, unit string) string {
	switch unit {
	case perOp:
		d := time.Duration(v)
		switch {
		case d >= time.Second:
			return fmt.Sprintf("%.2f s", d.Seconds())
		case d >= time.Millisecond:
			return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
		default:
			return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
		}
	case mib:
		return fmt.Sprintf("%.1f MiB", v)
	case "/cluster":
		return fmt.Sprintf("%.3g per cluster", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}
