package fleet_test

import (
	"os"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveBenchBinaries() // built by BenchmarkFleetPushRSS
	os.Exit(code)
}
