package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

func newPullCmd(f *rootFlags) *cobra.Command {
	var (
		reg registryFlags
		dir string
	)
	cmd := &cobra.Command{
		Use:   "pull oci://HOST/REPOSITORY:TAG -d DIR",
		Short: "Extract a Flux artifact into a new directory",
		Long: `Pull downloads a Flux artifact and extracts it into DIR, which must not exist
or be empty. Entries that would land outside DIR, symlinks, special files and
artifacts over 100 MiB unpacked (oci.MaxPullSize, Flux's default) are
refused; DIR never holds half an artifact. Prints the digest reference.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			md, err := oci.Pull(ctx, args[0], dir, as[oci.PullOption](reg.options(f.log))...)
			if err != nil {
				return err
			}
			f.log.Info("pulled", "url", args[0], "files", md.Files, "revision", md.Revision, "dir", dir)
			_, err = fmt.Fprintln(cmd.OutOrStdout(), md.Digest)
			return err
		},
	}
	reg.bind(cmd)
	cmd.Flags().StringVarP(&dir, "output-dir", "d", "", "directory to create with the artifact's files")
	refuseOldOutput(cmd, "output-dir")
	return cmd
}
