package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

func newGraphCmd(*rootFlags) *cobra.Command {
	var (
		stack             stackFlag
		repo              repoFlags
		format, oldFormat string
	)
	cmd := &cobra.Command{
		Use:   "graph [ENTRY | -f STACK] [-o tree|mermaid|dot|json]",
		Short: "Draw the layers of a stack file or of a cluster's Flux repository, how each becomes Ready, and the critical path",
		Long: `Graph draws the dependency DAG of a stack file (-f) or of the Flux
Kustomizations of a cluster's repository (ENTRY, as lint reads it): each layer
with its kind (Kustomization or HelmRelease) and how it becomes Ready (wait,
health checks, no wait), the Kustomization that applies it (dashed), and the
critical path: the longest chain of layers that become Ready one after
another, with what its dependsOn edges cost a bootstrap in stock Flux: up to
--requeue-dependency (30s) each, as kustomize-controller looks at a
Kustomization whose dependencies are not Ready again only after that long
(fluxpack flux-patch shortens it, where you may change Flux).

-o chooses the format (--format is its deprecated spelling):

  tree     the bootstrap order from the top: each layer that depends on none,
           and below a layer those that wait for it, each drawn under the
           dependency it waits for last (default)
  mermaid  a flowchart that renders on GitHub (critical path in red)
  dot      Graphviz
  json     the layers (kind, how each becomes Ready, dependsOn, the layer
           that applies it) and the critical path, for programs

--external, --root and --source read a repository (ENTRY); with -f they are
refused.`,
		Example: `  fluxpack graph clusters/production -o mermaid
  fluxpack graph -f platform/stack.yaml -o dot
  fluxpack graph -f platform/stack.yaml -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if fs.Changed("format") {
				if fs.Changed("output") {
					return fmt.Errorf("give -o/--output only: --format is its deprecated spelling")
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "Flag --format has been deprecated, use -o/--output")
				format = oldFormat
			}
			f, err := layering.ParseGraphFormat(format)
			if err != nil {
				return formatError(format, formatNames())
			}
			entry, err := stackOrEntry(stack, args)
			if err != nil {
				return err
			}
			var out []byte
			if entry != "" {
				opts, err := repo.options()
				if err != nil {
					return err
				}
				out, err = fluxrepo.Graph(cmd.Context(), entry, f, opts...)
				if err != nil {
					return err
				}
			} else {
				if err := repo.notForStack(false); err != nil {
					return err
				}
				if out, err = stackfile.Graph(string(stack), f); err != nil {
					return err
				}
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	stack.bind(cmd)
	repo.bind(cmd)
	cmd.Flags().StringVarP(&format, "output", "o", string(layering.GraphTree), "output format: "+formatNames())
	cmd.Flags().StringVar(&oldFormat, "format", "", "deprecated: use -o/--output")
	_ = cmd.Flags().MarkHidden("format")
	return cmd
}

// formatNames lists graph's formats.
func formatNames() string {
	var s []string
	for _, f := range layering.GraphFormats() {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}
