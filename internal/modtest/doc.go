// Package modtest holds tests of fluxpack as a module others use, not of
// its code: a module that imports fluxpack's packages resolves the same
// dependency versions fluxpack is tested with (TestImporterGetsTestedVersions),
// and `go install github.com/fluxpack/fluxpack/cmd/fluxpack@VERSION` builds
// and reports that version (TestGoInstallAtVersion, build tag moduletest,
// run by make test with its own timeout because it compiles the CLI).
// It has no code of its own.
package modtest
