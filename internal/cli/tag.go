package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

func newTagCmd(f *rootFlags) *cobra.Command {
	var (
		reg  registryFlags
		tags []string
	)
	cmd := &cobra.Command{
		Use:   "tag oci://HOST/REPOSITORY:TAG --tag T...",
		Short: "Point more tags at an artifact",
		Long:  `Tag points each --tag at the artifact the URL names. Prints one host/repository:tag@digest line per tag.`,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			res, err := oci.Tag(ctx, args[0], tags, as[oci.TagOption](reg.options(f.log))...)
			if err != nil {
				return err
			}
			for _, t := range res.Tags {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%s:%s@%s\n", res.Repository, t, res.Digest); err != nil {
					return err
				}
			}
			return nil
		},
	}
	reg.bind(cmd)
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "tag to add (repeatable)")
	return cmd
}
