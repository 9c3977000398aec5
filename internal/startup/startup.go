// Package startup keeps the garbage collector off while the packages the
// fluxpack binary links initialize, and Done hands it back as main starts.
//
// Every fluxpack command pays for the inits of some 700 packages (Helm's
// JSON-schema meta-schemas, client-go's and kubectl's schemes, govalidator's
// regexps, ...): about 10 MiB allocated before main, most of it kept for
// the life of the process. With the collector on, the runtime starts three
// collections over that growing heap (its first goal is 4 MiB), a fifth of
// the start-up's CPU time, and reclaims next to nothing. Off, the heap stays
// bounded by initLimit: past it the collector runs anyway.
//
// Done does not turn the collector on at once: with no collection behind
// it, the runtime would start one straight away, over the whole init heap,
// while a command like `fluxpack version` is already done. It sets a memory
// limit where GOGC would put the next goal (the memory in use, plus GOGC
// percent of the heap); the first collection runs there, and then GOGC and
// GOMEMLIMIT take over, as set.
//
// The linker initializes packages in import-path order as soon as their
// imports are (the Go spec's rule since Go 1.21); this package imports only
// runtime and runtime/debug, so it runs before the heavy inits that sort
// after github.com/fluxpack (cmd/fluxpack's TestNoCollectionDuringInits
// holds that). Import it from a main package only: a library must not
// change its host's collector.
package startup

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// initLimit bounds the memory in use while the collector is off for the
// inits: a few times what they allocate.
const initLimit = 64 << 20

var (
	gcPercent       = 100                 // as GOGC set it; restored after the first collection
	memLimit  int64 = math.MaxInt64       // as GOMEMLIMIT set it
	restored        = make(chan struct{}) // closed when both are back
)

func init() { stop() }

// stop turns the collector off, bounded by initLimit, and keeps the
// settings to restore.
func stop() {
	gcPercent = debug.SetGCPercent(-1)
	memLimit = debug.SetMemoryLimit(-1) // a negative value reads it
	debug.SetMemoryLimit(min(memLimit, initLimit))
}

// Tune replaces the settings Done gives back (what GOGC and GOMEMLIMIT
// set) with percent and limit: for a command whose collector main tunes.
// Call it before Done.
func Tune(percent int, limit int64) {
	gcPercent, memLimit = percent, limit
}

// Done lets the first collection run where GOGC would have put it had one
// run before main, then gives the collector back GOGC's and GOMEMLIMIT's
// settings (the defaults: 100 and no limit). main calls it first.
func Done() {
	if gcPercent < 0 { // GOGC=off: nothing to schedule
		restore()
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	inUse := s[0].Value.Uint64() - s[1].Value.Uint64()
	next := inUse + s[2].Value.Uint64()*uint64(gcPercent)/100
	debug.SetMemoryLimit(min(memLimit, int64(min(next, uint64(math.MaxInt64)))))
	// The cleanup runs once a collection has found the sentinel unreachable:
	// after the first one. (64 bytes: the tiny allocator's objects may never
	// be collected alone.)
	runtime.AddCleanup(new([64]byte), func(struct{}) { restore() }, struct{}{})
}

func restore() {
	debug.SetMemoryLimit(memLimit)
	debug.SetGCPercent(gcPercent)
	close(restored)
}
