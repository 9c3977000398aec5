package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/argocd"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/atomicfile"
)

func newImportCmd(f *rootFlags) *cobra.Command {
	var (
		repo   repoFlags
		out    string
		argoCD bool
	)
	cmd := &cobra.Command{
		Use:   "import (ENTRY | --argocd DIR) [--output-file STACK]",
		Short: "Turn a cluster's Flux repository, or an Argo CD app-of-apps, into a stack file",
		Long: `Import reads the Flux tree of ENTRY as lint does (the folder kustomize-controller
applies for the cluster, typically clusters/<name>) and writes the same
platform as a fluxpack stack file: one layer per Kustomization but the root
one that flux bootstrap applies, every field as the Kustomization has it,
Flux's own defaults left to Flux (fluxDefaults: true). It then renders the
stack and compares every Kustomization's spec with the original, field for
field: whatever differs, and whatever the stack cannot say (a Kustomization
applied by another Kustomization, a dependency outside the stack, objects
the root applies that are not Kustomizations), is logged to stderr, one line
each, and written as a comment at the end of the stack file: nothing is
dropped silently. suspend: true is kept, and so is what it holds back: a
Kustomization that a suspended one applies (an opt-in umbrella's children)
depends on it in the stack, so a fresh cluster creates none of it until the
umbrella is resumed; an umbrella that waits for what it applies is refused,
by name. A tenant's Kustomization (another namespace, its own service
account) stays applied by the layer that applies it; one the root applies
is refused, by name.

The layers' paths are relative to the file written (--output-file), so
"fluxpack render -f" of it works; on stdout, or for a file outside the
repository, they are relative to the repository's root.

With --argocd, DIR holds the Argo CD Applications of an app-of-apps (and
ApplicationSets with list generators): each Application becomes a layer,
each sync wave depending on the wave before it, charts as HelmRelease layers
(version, releaseName, values, CreateNamespace), Git paths as Kustomization
layers of the repository; what Flux cannot say is listed the same way. Their
paths, too, are relative to the file written: --root says where the app of
apps' repository starts (default: the directory above DIR holding .git).`,
		Example: `  fluxpack import clusters/production --output-file stack.yaml
  fluxpack import clusters/production --external ConfigMap/flux-system/cluster-vars
  fluxpack import --argocd apps/ --output-file stack.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			var diffs []string
			if argoCD {
				if len(repo.sources) > 0 || len(repo.external) > 0 {
					return fmt.Errorf("--source and --external read a Flux repository (ENTRY), not Argo CD Applications (--argocd): an Application names its own repository")
				}
				var opts []argocd.Option
				if repo.root != "" {
					opts = append(opts, argocd.WithRoot(repo.root))
				}
				if out != "" {
					opts = append(opts, argocd.WithStackFile(out))
				}
				imp, err := argocd.Import(args[0], opts...)
				if err != nil {
					return err
				}
				data, diffs = imp.Stack, imp.Differences
			} else {
				opts, err := repo.options()
				if err != nil {
					return err
				}
				if out != "" {
					opts = append(opts, fluxrepo.WithStackFile(out))
				}
				imp, err := fluxrepo.Import(cmd.Context(), args[0], opts...)
				if err != nil {
					return err
				}
				data, diffs = imp.Stack, imp.Differences
			}
			for _, d := range diffs {
				f.log.Warn("import: " + d)
				data = append(data, "# difference: "+d+"\n"...)
			}
			if out == "" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			return atomicfile.WriteFileContext(cmd.Context(), out, data, 0o644)
		},
	}
	repo.bind(cmd)
	cmd.Flags().BoolVar(&argoCD, "argocd", false, "DIR holds the Argo CD Applications of an app-of-apps (sync waves become layers)")
	cmd.Flags().StringVar(&out, "output-file", "", "file to write the stack to (default: stdout)")
	refuseOldOutput(cmd, "output-file")
	return cmd
}
