package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// PrebuiltEnv names the folder of the binaries `make test-bins` builds from
// this checkout before the tests run (make test and make e2e set it).
const PrebuiltEnv = "FLUXPACK_TEST_BIN"

// Prebuilt returns the path of a binary of this checkout that `make
// test-bins` built into $FLUXPACK_TEST_BIN: "fluxpack" (the CLI),
// "flux-pack.tar.gz" (its release archive) or "sigstore-kms-testkms" (the
// KMS plugin of KMSPlugin).
//
// Tests never compile a command themselves: a cold build of the CLI takes
// minutes on a busy machine, longer than go test's own timeout allows, and a
// test killed by that timeout leaves its go build running. When the variable
// is unset or the binary is missing the test is skipped, or fails when
// FLUXPACK_REQUIRE_REAL=1 (make test), so CI never passes by skipping.
func Prebuilt(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv(PrebuiltEnv)
	if dir == "" {
		msg := "$" + PrebuiltEnv + " is not set: run `make test`, or `make test-bins` and set " +
			PrebuiltEnv + "=" + filepath.Join(RepoRoot(t), "bin", "test")
		if requireReal() {
			t.Fatal(msg + " (FLUXPACK_REQUIRE_REAL=1 forbids skipping)")
		}
		t.Skip(msg)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		if requireReal() {
			t.Fatalf("%s: run `make test-bins` (FLUXPACK_REQUIRE_REAL=1 forbids skipping)", err)
		}
		t.Skipf("%s: run `make test-bins`", err)
	}
	return p
}
