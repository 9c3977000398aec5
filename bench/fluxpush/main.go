// Command fluxpush pushes a directory with fluxcd/pkg/oci's Client.Push, the
// call `flux push artifact` makes, with the flux CLI's default ignore list.
// It is the peer process whose peak RSS the benchmarks set beside
// `fluxpack push`; it is not part of fluxpack.
//
// Usage: fluxpush DIR HOST/REPOSITORY:TAG
package main

import (
	"context"
	"fmt"
	"os"

	fluxoci "github.com/fluxcd/pkg/oci"

	"github.com/fluxpack/fluxpack/oci"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fluxpush DIR HOST/REPOSITORY:TAG")
		os.Exit(2)
	}
	dir, url := os.Args[1], os.Args[2]
	meta := fluxoci.WithPushMetadata(fluxoci.Metadata{Source: "bench", Revision: "bench"})
	digest, err := fluxoci.NewClient(nil).Push(context.Background(), url, dir, meta, fluxoci.WithPushIgnorePaths(oci.DefaultIgnorePaths()...))
	if err != nil {
		fmt.Fprintf(os.Stderr, "pushing %s to %s: %v\n", dir, url, err)
		os.Exit(2)
	}
	fmt.Println(digest)
}
