// Command docgen writes the Markdown reference of the fluxpack CLI with
// cobra/doc: go run ./hack/docgen docs/cli
package main

import (
	"fmt"
	"os"

	"github.com/fluxpack/fluxpack/internal/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: docgen DIR")
		os.Exit(2)
	}
	if err := cli.WriteDocs(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
