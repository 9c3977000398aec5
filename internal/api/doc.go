// Package api holds no code: its test lists the exported API of every
// public package of fluxpack (testdata/<package>.golden, like `go doc
// -all` without the comments), so that a change to the library's surface
// is a visible diff in review. Run `go test ./internal/api -update` after a
// deliberate change.
package api
