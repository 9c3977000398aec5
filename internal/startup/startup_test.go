package startup

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDone: the collector is off after stop (what init runs), with a memory
// limit, and Done gives back what GOGC and GOMEMLIMIT set.
func TestDone(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the test checks the defaults")
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	stop()
	assert.Equal(t, -1, debug.SetGCPercent(-1), "GC percent after stop")
	assert.Equal(t, int64(initLimit), debug.SetMemoryLimit(-1), "memory limit after stop")

	Done()
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	assert.Equal(t, 100, debug.SetGCPercent(100), "GC percent after Done (GOGC's default)")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "memory limit after Done (no GOMEMLIMIT)")
}
