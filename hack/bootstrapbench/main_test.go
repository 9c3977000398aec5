package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two runs of two layouts: every stock wall time in run order, the worst,
// the median critical path, the ratios with their verdicts, the fast
// median, the failed reconciles of every run, and each run's load.
func TestTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	write("figures-2.jsonl", `{"layout":"S0 fluxpack","mode":"stock","ready":24,"criticalPath":19,"failed":0,"sourceReady":0.9,"rootStarted":1.5}
{"layout":"S0 fluxpack","mode":"fast","ready":21,"criticalPath":19,"failed":1}
{"layout":"S4 fluxpack","mode":"stock","ready":19,"criticalPath":17,"failed":0,"rootStarted":1}
`)
	write("figures-1.jsonl", `{"layout":"S0 fluxpack","mode":"stock","ready":21,"criticalPath":20,"failed":0,"sourceReady":0.3,"rootStarted":0.5}
{"layout":"S0 fluxpack","mode":"fast","ready":20,"criticalPath":19,"failed":0}

{"layout":"S4 fluxpack","mode":"stock","ready":18,"criticalPath":17,"failed":0,"rootStarted":1}
`)
	write("load-1.txt", " 00:10:00 up 1 day,  load average: 1.00, 2.00, 3.00\n 00:11:00 up 1 day,  load average: 4.00, 2.00, 3.00\n")
	write("figures-x.jsonl", "not a run")
	runs, err := readRuns(dir)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	var b strings.Builder
	require.NoError(t, writeTable(&b, runs))
	lines := strings.Split(b.String(), "\n")
	var s0, s4 string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "S0 fluxpack"):
			s0 = l
		case strings.HasPrefix(l, "S4 fluxpack"):
			s4 = l
		}
	}
	// S0: walls 21 then 24, worst 24, CP median 19.5, 24/19.5 = 1.23
	// (missed), max own 24/19 = 1.26, fast median 20.5, 24/20.5 = 1.17,
	// source Ready median 0.6, root start median 1.0, one failed
	// reconcile (a fast run's).
	assert.Equal(t, []string{"S0", "fluxpack", "21.0", "24.0", "24.0", "19.5", "1.23", "MISSED", "1.26", "20.5", "1.17", "ok", "0.6", "1.0", "1"}, strings.Fields(s0))
	// S4 has no fast run.
	assert.Equal(t, []string{"S4", "fluxpack", "18.0", "19.0", "19.0", "17.0", "1.12", "ok", "1.12", "-", "-", "0.0", "1.0", "0"}, strings.Fields(s4))
	assert.Contains(t, b.String(), "run 1: 00:10:00 up 1 day,  load average: 1.00, 2.00, 3.00  →  00:11:00 up 1 day,  load average: 4.00, 2.00, 3.00")
	assert.Contains(t, b.String(), "run 2: \n")

	_, err = readRuns(t.TempDir())
	assert.ErrorContains(t, err, "no figures-N.jsonl")
}
