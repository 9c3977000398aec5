package startup

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDone: after stop (what init runs) the collector is off, with a
// memory limit; after Done it stays off, under a limit, until a collection
// has run; then GOGC's and GOMEMLIMIT's settings are back.
func TestDone(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the test checks the defaults")
	}
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	restored = make(chan struct{})

	stop()
	assert.Equal(t, -1, readGCPercent(), "GC percent after stop")
	assert.Equal(t, int64(initLimit), debug.SetMemoryLimit(-1), "memory limit after stop")

	Done()
	assert.Equal(t, -1, readGCPercent(), "GC percent after Done, before a collection")
	limit := debug.SetMemoryLimit(-1)
	assert.Less(t, limit, int64(math.MaxInt64), "memory limit after Done, before a collection")
	assert.Positive(t, limit, "memory limit after Done, before a collection")

	awaitRestore(t)
	assert.Equal(t, 100, readGCPercent(), "GC percent after the first collection (GOGC's default)")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "memory limit after the first collection (no GOMEMLIMIT)")
}

// TestDoneGOGCOff: with GOGC=off the collector stays off, and the limit
// is GOMEMLIMIT's at once.
func TestDoneGOGCOff(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(math.MaxInt64)
	restored = make(chan struct{})

	stop()
	Done()
	select {
	case <-restored:
	default:
		t.Fatal("Done under GOGC=off did not restore at once")
	}
	assert.Equal(t, -1, readGCPercent(), "GC percent under GOGC=off")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "memory limit under GOGC=off")
}

// TestTune: the settings Tune gives are those the first collection
// brings back, the limit at once bounding the first goal.
func TestTune(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	restored = make(chan struct{})
	stop()
	Tune(400, 2<<30)
	Done()
	assert.LessOrEqual(t, debug.SetMemoryLimit(-1), int64(2<<30), "memory limit after Done, before a collection")
	awaitRestore(t)
	assert.Equal(t, 400, readGCPercent(), "GC percent after the first collection")
	assert.Equal(t, int64(2<<30), debug.SetMemoryLimit(-1), "memory limit after the first collection")
}

// awaitRestore collects until the settings are back (Done's cleanup ran).
func awaitRestore(t *testing.T) {
	t.Helper()
	for {
		runtime.GC() // the sentinel is unreachable: its cleanup is queued
		select {
		case <-restored:
			return
		case <-t.Context().Done():
			t.Fatal("the settings were not restored after a collection")
		default:
			runtime.Gosched()
		}
	}
}

// readGCPercent reads the GC percent without changing it.
func readGCPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestMain(m *testing.M) {
	// The package's own init turned the collector off for this test binary
	// too: give it back its settings before the tests run.
	restore()
	os.Exit(m.Run())
}
