package review_test

import (
	"os"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveBenchBinaries() // built by BenchmarkDiffBesideFlate
	os.Exit(code)
}
