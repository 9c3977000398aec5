// Package depcheck holds no code: its test holds each public package of
// fluxpack to a budget of dependencies, counted as `go list -deps` counts
// them (the package, its imports, theirs, and the standard library), the
// way go-containerregistry's depcheck test holds its import graph. A
// library is imported for one job and should cost what that job needs
// (STYLE.md, "Weight"). Raise a budget only with a reason in the commit.
//
// TestCLIFamilies does the same for the fluxpack binary, which links what
// every command needs: it lists the heavy families it links (helm,
// client-go, sigstore, notation, the cloud SDKs, grpc, ...) with their
// package counts and the reason for each (go test -v prints the table), and
// fails when a new family appears without one.
package depcheck
