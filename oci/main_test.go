package oci_test

import (
	"os"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir) // made by the benchmarks
	}
	testutil.RemoveBenchBinaries()
	os.Exit(code)
}
