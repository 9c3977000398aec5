package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

func newListCmd(f *rootFlags) *cobra.Command {
	var (
		reg    registryFlags
		out    outputFlag
		semver string
	)
	cmd := &cobra.Command{
		Use:   "list oci://HOST/REPOSITORY",
		Short: "List a repository's tags with the artifact each points at",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			opts := as[oci.ListOption](reg.options(f.log))
			if semver != "" {
				opts = append(opts, oci.WithSemver(semver))
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			tags, err := oci.List(ctx, args[0], opts...)
			if err != nil {
				return err
			}
			if out == "json" {
				if tags == nil {
					tags = []oci.TagInfo{}
				}
				return writeJSON(cmd.OutOrStdout(), tags)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TAG\tDIGEST\tREVISION\tCREATED")
			for _, t := range tags {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Tag, t.Digest, t.Revision, t.Created)
			}
			return tw.Flush()
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	cmd.Flags().StringVar(&semver, "semver", "", "keep only semver tags in this range, newest first (e.g. \">=1.0.0 <2.0.0\")")
	return cmd
}
