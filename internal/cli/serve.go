package cli

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci/registry"
)

func newRegistryCmd(f *rootFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Run a local OCI registry to try fluxpack and Flux against",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newRegistryServeCmd(f))
	return cmd
}

func newRegistryServeCmd(f *rootFlags) *cobra.Command {
	var (
		addr, dir   string
		allowRemote bool
	)
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:5000] [--dir DIR]",
		Short: "Serve a local OCI registry until interrupted",
		Long: `Serve runs an OCI registry (go-containerregistry's, with the referrers API)
on --addr, plain HTTP with no authentication, to try push, pull, tag, list,
signing (cosign keys, notation) and Flux's OCIRepository against, with no
Docker. It says on stderr where it listens and serves until SIGINT or
SIGTERM, then finishes the requests in flight and exits 0.

Blobs are kept in memory, or with --dir as files in DIR, where they outlive
the registry (a push after a restart uploads no blob DIR holds). Manifests
and tags are always in memory: they are lost when it stops.

--addr must be on loopback (127.0.0.1, ::1, localhost) unless
--allow-remote: anyone who reaches the registry can push and pull. Port 0
picks a free port. An OCIRepository reaching it needs spec.insecure: true.`,
		Example: `  fluxpack registry serve                       # in one terminal
  fluxpack push ./platform oci://127.0.0.1:5000/platform:v1   # in another`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := []registry.Option{registry.WithAddr(addr), registry.WithLogger(f.log)}
			if dir != "" {
				opts = append(opts, registry.WithDir(dir))
			}
			if allowRemote {
				opts = append(opts, registry.WithAllowRemote())
			}
			s, err := registry.Listen(opts...)
			if err != nil {
				return err
			}
			kept := "everything in memory (lost when it stops)"
			if s.Dir() != "" {
				kept = "blobs in " + s.Dir() + ", manifests and tags in memory (lost when it stops)"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "serving an OCI registry on %s, %s, until interrupted; push to it: %s push ./dir %s\n",
				s.Addr(), kept, cmd.Root().DisplayName(), pushTarget(s.Addr()))
			return s.Serve(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", registry.DefaultAddr, "host:port to listen on (port 0: a free one)")
	fs.StringVar(&dir, "dir", "", "folder to keep the blobs in, made if missing (default: memory)")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow an --addr that is not on loopback (the registry has no authentication)")
	return cmd
}

// pushTarget is how to push to a registry listening on addr: on loopback
// directly; on every interface (--allow-remote) through loopback; on
// another address with --insecure-registry, as the registry speaks plain
// HTTP.
func pushTarget(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "oci://" + addr + "/platform:v1"
	}
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.IsUnspecified():
		return "oci://" + net.JoinHostPort("127.0.0.1", port) + "/platform:v1"
	case ip != nil && ip.IsLoopback():
		return "oci://" + addr + "/platform:v1"
	}
	return "oci://" + addr + "/platform:v1 --insecure-registry"
}
