package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var benchBins struct {
	sync.Mutex
	dir  string
	bins map[string]string // command name → path
}

// BenchBinaries builds each command (name → package path relative to the
// repository, such as "./cmd/fluxpack") once per test binary, with the
// toolchain that runs the test, as the release builds fluxpack
// (internal/release: no cgo, -trimpath, stripped), and returns name → path.
// Call RemoveBenchBinaries from TestMain to delete them.
func BenchBinaries(tb testing.TB, cmds map[string]string) map[string]string {
	tb.Helper()
	benchBins.Lock()
	defer benchBins.Unlock()
	if benchBins.dir == "" {
		dir, err := os.MkdirTemp("", "fluxpack-bench-bin-")
		if err != nil {
			tb.Fatal(err)
		}
		benchBins.dir, benchBins.bins = dir, map[string]string{}
	}
	out := map[string]string{}
	for cmd, pkg := range cmds {
		if p, ok := benchBins.bins[cmd]; ok {
			out[cmd] = p
			continue
		}
		p := filepath.Join(benchBins.dir, cmd)
		c := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", p, pkg)
		c.Dir = RepoRoot(tb)
		c.Env = append(os.Environ(), "GOTOOLCHAIN=auto", "CGO_ENABLED=0")
		if msg, err := c.CombinedOutput(); err != nil {
			tb.Fatalf("building %s: %v\n%s", pkg, err, msg)
		}
		benchBins.bins[cmd], out[cmd] = p, p
	}
	return out
}

// RemoveBenchBinaries deletes what BenchBinaries built.
func RemoveBenchBinaries() {
	benchBins.Lock()
	defer benchBins.Unlock()
	if benchBins.dir != "" {
		os.RemoveAll(benchBins.dir)
		benchBins.dir, benchBins.bins = "", nil
	}
}

// PeakRSS runs a command through bench/maxrss (the path maxrss) and
// returns the command's peak resident set size in bytes.
func PeakRSS(tb testing.TB, maxrss string, args ...string) int64 {
	tb.Helper()
	c := exec.Command(maxrss, args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		tb.Fatalf("%s %v: %v\n%s", filepath.Base(args[0]), args[1:], err, stderr.Bytes())
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		tb.Fatal(fmt.Errorf("reading the peak RSS of %s: %w", filepath.Base(args[0]), err))
	}
	return kib << 10
}
