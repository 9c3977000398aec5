package cli

import (
	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxpatch"
)

func newFluxPatchCmd(*rootFlags) *cobra.Command {
	o := fluxpatch.DefaultOptions()
	var (
		format      string
		controllers []string
	)
	for _, c := range o.Controllers {
		controllers = append(controllers, string(c))
	}
	cmd := &cobra.Command{
		Use:   "flux-patch [--requeue-dependency 5s] [--format bootstrap|fluxinstance] [--controller NAME]...",
		Short: "Optional: the patch that shortens --requeue-dependency, for a Flux installation you may change",
		Long: `Flux-patch writes the patch that sets --requeue-dependency on kustomize-controller
and helm-controller. kustomize-controller does not watch dependencies: a
Kustomization whose dependsOn is not Ready is looked at again only after
--requeue-dependency, 30s in stock Flux (helm-controller does the same for a
HelmRelease's dependsOn), so each edge on a bootstrap's critical path costs up
to that much (fluxpack graph says how much).

It is optional, for those who control their Flux installation. fluxpack's own
answer works in stock Flux: a stack with wake makes each layer wake its
dependents through notification-controller, and lint's merge hints remove the
edges that are not needed.

  bootstrap     flux-system/kustomization.yaml as flux bootstrap writes it
                (gotk-components.yaml, gotk-sync.yaml), with one patch per
                controller appending the flag to its first container's args;
                if yours has patches already, add these to them
  fluxinstance  a FluxInstance of flux-operator (fluxcd.controlplane.io/v1)
                whose spec.kustomize.patches to merge into yours

The controllers parse their flags with pflag, so the flag appended last wins.
The duration must be at least 1s: shorter, every waiting Kustomization polls
the API server many times a second. Prints the patch; writes no file.`,
		Example: `  fluxpack flux-patch > clusters/production/flux-system/kustomization.yaml
  fluxpack flux-patch --requeue-dependency 10s --format fluxinstance
  fluxpack flux-patch --controller kustomize-controller`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := fluxpatch.ParseFormat(format)
			if err != nil {
				return err
			}
			o.Format = f
			o.Controllers = nil
			for _, c := range controllers {
				o.Controllers = append(o.Controllers, fluxpatch.Controller(c))
			}
			out, err := fluxpatch.Render(o)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&o.RequeueDependency, "requeue-dependency", o.RequeueDependency, "how long a controller waits before it looks again at dependencies that are not Ready (at least 1s; stock Flux: 30s)")
	fs.StringVar(&format, "format", string(o.Format), "bootstrap (flux-system/kustomization.yaml) or fluxinstance (flux-operator)")
	fs.StringSliceVar(&controllers, "controller", controllers, "the controllers to patch: kustomize-controller, helm-controller")
	return cmd
}
