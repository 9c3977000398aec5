package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/substitute"
)

func newPreviewCmd(f *rootFlags) *cobra.Command {
	var (
		dir, ksFile string
		cluster     string
		repo        repoFlags
		charts      chartFlags
		varsFrom    []string
		strict      bool
		showSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "preview [NAME] (--cluster ENTRY | --path DIR --kustomization-file KS.yaml) [--vars-from FILE]...",
		Short: "Print the objects kustomize-controller would apply for a Kustomization, from a local directory",
		Long: `Preview prints, as one YAML stream, what kustomize-controller applies for
the Kustomization NAME of KS.yaml (or its only one) when spec.path holds DIR:

  - the kustomize build of DIR, with the kustomization.yaml Flux generates
    when there is none and the Kustomization's targetNamespace,
    namePrefix/Suffix, patches, images and components, as Flux's generator
    writes it;
  - spec.postBuild substitution as the controller runs it: substituteFrom in
    order, from the ConfigMaps and Secrets of the --vars-from files (optional
    ones may be missing), the inline substitute map winning, names checked,
    substituteStrategy honoured, strict (a variable without a value or
    default fails, as in kustomize-controller ≥ v1.9) unless --strict=false;
  - the kustomize.toolkit.fluxcd.io/name and /namespace labels and
    spec.commonMetadata.

Values that variables take from substituteFrom Secrets print as REDACTED
unless --show-secrets (errors are still those of the real values).

The output is that of flux build kustomization NAME --path DIR
--kustomization-file KS.yaml with the same ConfigMaps and Secrets in the
cluster, byte for byte (flux build --dry-run skips substituteFrom). A plain
directory (no kustomization file, no field that changes the build) is read
object by object, so preview stays linear where flux build is quadratic. DIR
is only read.

With --cluster and HelmRelease/NAMESPACE/NAME (or HelmRelease/NAME in
flux-system), preview prints what helm-controller would install for that
HelmRelease of the tree, as helm template prints it: the chart's CRDs that
spec.install.crds applies, then the release's manifest, the values merged in
helm-controller's order (chart defaults, valuesFrom in order from the
ConfigMaps and Secrets of the tree and of --vars-from, inline values) and its
post-renderers applied. The chart is found as lint finds it (a folder of a
source of the tree, or --charts); values from Secrets print as REDACTED
unless --show-secrets.

With --cluster, preview reads the cluster's repository as lint does
(--source, --root apply) and previews its Kustomization NAME (or
NAMESPACE/NAME) from its own source, an ExternalArtifact laid out from its
generator; substituteFrom is served by the ConfigMaps and Secrets of the tree
and by --vars-from.`,
		Example: `  fluxpack preview --cluster clusters/production infra-configs
  fluxpack preview --cluster clusters/production HelmRelease/flux-system/external-secrets --charts charts/
  fluxpack preview apps --path ./apps --kustomization-file clusters/prod/apps.yaml --vars-from clusters/prod/vars/configmap-cluster-vars.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			opts := []substitute.RenderOption{substitute.WithVarsFrom(varsFrom...), substitute.WithStrict(strict)}
			if !showSecrets {
				opts = append(opts, substitute.WithRedactedSecrets())
			}
			if ref, ok := helmReleaseRef(name); ok && cluster != "" {
				return previewRelease(cmd, f.log, cluster, ref, &repo, &charts, varsFrom, showSecrets)
			}
			if cluster != "" {
				if name == "" || dir != "" || ksFile != "" {
					return fmt.Errorf("with --cluster, give the Kustomization's NAME and neither --path nor --kustomization-file")
				}
				ropts, err := repo.options()
				if err != nil {
					return err
				}
				ctx, _, done, err := charts.lintOptions(cmd.Context(), f.log)
				if err != nil {
					return err
				}
				defer done()
				out, err := fluxrepo.Preview(ctx, cluster, name, append(ropts, charts.readOptions()...), opts...)
				if err != nil {
					return previewAdvice(err, varsFrom)
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			if dir == "" || ksFile == "" {
				return fmt.Errorf("give --path and --kustomization-file, or --cluster ENTRY and the Kustomization's NAME")
			}
			ks, err := fluxbuild.ReadKustomization(ksFile, name)
			if err != nil {
				return err
			}
			ks.Spec.Path = "" // DIR is what spec.path points at
			out, err := fluxbuild.Preview(cmd.Context(), fluxbuild.Source{Dir: dir}, ks, opts...)
			if err != nil {
				return previewAdvice(err, varsFrom)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dir, "path", "", "local directory holding what the Kustomization's spec.path points at")
	fs.StringVar(&ksFile, "kustomization-file", "", "YAML file holding the Flux Kustomization")
	fs.StringArrayVar(&varsFrom, "vars-from", nil, "YAML file of ConfigMaps/Secrets for spec.postBuild.substituteFrom (repeatable)")
	fs.BoolVar(&strict, "strict", true, "fail on a variable without a value or default, as kustomize-controller does")
	fs.BoolVar(&showSecrets, "show-secrets", false, "print the values variables take from substituteFrom Secrets (default: "+substitute.Redacted+")")
	fs.StringVar(&cluster, "cluster", "", "a cluster's Flux entry point (such as clusters/production): preview its Kustomization NAME, read from the repository as lint reads it")
	repo.bind(cmd)
	charts.bind(cmd)
	return cmd
}

// previewAdvice adds to an error of variables the flags that would give
// them: the values live in the cluster (Terraform's ConfigMap, a Secret)
// and preview reads them from files.
func previewAdvice(err error, varsFrom []string) error {
	switch {
	case errors.Is(err, substitute.ErrVarNotSet) && len(varsFrom) == 0:
		return fmt.Errorf("%w; give the variables' values with --vars-from FILE (ConfigMaps and Secrets as the cluster holds them), or --strict=false to leave them as they are", err)
	case errors.Is(err, substitute.ErrVarNotSet):
		return fmt.Errorf("%w; none of the --vars-from files gives it", err)
	case errors.Is(err, substitute.ErrSourceNotFound):
		return fmt.Errorf("%w; give it with --vars-from FILE (the ConfigMap or Secret as the cluster holds it)", err)
	}
	return err
}

// helmReleaseRef reads HelmRelease/NAMESPACE/NAME or HelmRelease/NAME.
func helmReleaseRef(name string) (layering.ObjectRef, bool) {
	kind, _, ok := strings.Cut(name, "/")
	if !ok || !strings.EqualFold(kind, helmv2.HelmReleaseKind) {
		return layering.ObjectRef{}, false
	}
	ref, err := layering.ParseObjectRef(name)
	if err != nil {
		return layering.ObjectRef{}, false
	}
	ref.Kind = helmv2.HelmReleaseKind
	return ref, true
}

// previewRelease prints what helm-controller would install for the
// HelmRelease ref of the cluster's tree.
func previewRelease(cmd *cobra.Command, log *slog.Logger, cluster string, ref layering.ObjectRef, repo *repoFlags, charts *chartFlags, varsFrom []string, showSecrets bool) error {
	ropts, err := repo.options()
	if err != nil {
		return err
	}
	ctx, _, done, err := charts.lintOptions(cmd.Context(), log)
	if err != nil {
		return err
	}
	defer done()
	finder, err := charts.finder()
	if err != nil {
		return err
	}
	ropts = append(ropts, charts.readOptions()...)
	var opts []fluxbuild.ReleaseOption
	if !showSecrets {
		opts = append(opts, fluxbuild.WithRedactedSecrets())
	}
	if len(varsFrom) > 0 {
		srcs, err := substitute.ReadSources(varsFrom...)
		if err != nil {
			return err
		}
		opts = append(opts, fluxbuild.WithValuesFrom(srcs.Objects()...))
	}
	out, err := fluxrepo.PreviewRelease(ctx, cluster, ref, finder, ropts, opts...)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}
