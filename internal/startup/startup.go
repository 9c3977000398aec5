// Package startup keeps the garbage collector off while the packages the
// fluxpack binary links initialize, and Done turns it back on as main
// starts.
//
// Every fluxpack command pays for the inits of some 700 packages (Helm's
// JSON-schema meta-schemas, client-go's and kubectl's schemes, govalidator's
// regexps, ...): about 10 MiB allocated before main, most of it kept for
// the life of the process. With the collector on, the runtime starts three
// or four collections over that growing heap, a fifth of the start-up's CPU
// time, and reclaims next to nothing. Off, the heap stays bounded by
// initLimit: past it the collector runs anyway.
//
// The linker initializes packages in import-path order as soon as their
// imports are (the Go spec's rule since Go 1.21); this package imports only
// runtime/debug, so it runs before the heavy inits that sort after
// github.com/fluxpack (TestInitOrder in cmd/fluxpack holds that). Import it
// from a main package only: a library must not change its host's collector.
package startup

import "runtime/debug"

// initLimit bounds the heap while the collector is off: a few times what
// the inits allocate.
const initLimit = 64 << 20

var (
	gcPercent = -1 // as GOGC set it; restored by Done
	memLimit  int64
)

func init() { stop() }

// stop turns the collector off, bounded by initLimit, and keeps the
// settings Done restores.
func stop() {
	gcPercent = debug.SetGCPercent(-1)
	memLimit = debug.SetMemoryLimit(-1) // a negative value reads it
	debug.SetMemoryLimit(min(memLimit, initLimit))
}

// Done gives the collector back the settings GOGC and GOMEMLIMIT asked for
// (the defaults: 100 and no limit). main calls it first.
func Done() {
	debug.SetMemoryLimit(memLimit)
	debug.SetGCPercent(gcPercent)
}
