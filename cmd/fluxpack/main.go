// Command fluxpack renders a platform's bootstrap order as Flux manifests and
// ships them as OCI artifacts. See the README and docs/cli for the commands.
// Installed as flux-pack it is the Flux CLI plugin `flux pack`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/startup"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	startup.Done() // the collector was off while the linked packages initialized
	// The handlers stay until the process exits: a signal that arrives as
	// the command ends is absorbed, not fatal (a restored default handler
	// would kill the process after its cleanup, with no exit code).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop() // never runs: os.Exit runs no deferred call, so the handlers stay
	os.Exit(cli.MainAs(ctx, cli.NameFor(os.Args[0]), version, os.Args[1:], os.Stdout, os.Stderr))
}
