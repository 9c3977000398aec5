package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot returns the root of the fluxpack checkout (the folder with go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locating testutil source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// requireReal reports whether the run must use the real third-party binaries
// (make test and CI set FLUXPACK_REQUIRE_REAL=1): then a missing binary fails
// the test instead of skipping it.
func requireReal() bool { return os.Getenv("FLUXPACK_REQUIRE_REAL") == "1" }

// Tool returns the path of a third-party binary that hack/tools.sh builds:
// $FLUXPACK_TOOLS/<name> if set, else .cache/bin/<name> in the checkout. When
// the binary is absent the test is skipped, or fails when
// FLUXPACK_REQUIRE_REAL=1 (make test), so CI never passes by skipping.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("FLUXPACK_TOOLS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), ".cache", "bin")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if requireReal() {
		t.Fatalf("%s not found in %s: run `make tools` or, for the e2e binaries, `make e2e-tools` (FLUXPACK_REQUIRE_REAL=1 forbids skipping)", name, dir)
	}
	t.Skipf("%s not found in %s: run `make tools` or, for the e2e binaries, `make e2e-tools` to build it", name, dir)
	return ""
}
