// Package testhook lets fluxpack's own tests stop a command at a named
// moment of its work, to interrupt it there deterministically rather than
// after a guessed delay. The CLI tests' TestMain installs a hook (Set) in
// the child process it runs fluxpack in; nothing else does, so in the real
// binary At is one atomic load of a nil pointer.
//
// A command that writes files calls At with each phase it reaches (see
// the constants), and checks its context right after: a signal that
// arrived before then stops it with nothing written.
package testhook

import (
	"context"
	"sync/atomic"
)

// The phases a writing command reports.
const (
	// Prepared: everything is read and rendered in memory; nothing is
	// written yet.
	Prepared = "prepared"
	// Staged: the files are written beside their destination, not yet
	// renamed into place.
	Staged = "staged"
)

var hook atomic.Pointer[func(context.Context, string)]

// Set installs f, called by At with the caller's context and phase. Only
// tests call it.
func Set(f func(ctx context.Context, phase string)) { hook.Store(&f) }

// At calls the installed hook, if any, with the phase the caller reached.
func At(ctx context.Context, phase string) {
	if f := hook.Load(); f != nil {
		(*f)(ctx, phase)
	}
}
