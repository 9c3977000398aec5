package cli

import (
	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/internal/preview"
	"github.com/fluxpack/fluxpack/substitute"
)

func newPreviewCmd(f *rootFlags) *cobra.Command {
	var (
		dir, ksFile string
		varsFrom    []string
		strict      bool
	)
	cmd := &cobra.Command{
		Use:   "preview [NAME] --path DIR --kustomization-file KS.yaml [--vars-from FILE]...",
		Short: "Print the objects kustomize-controller would apply for a Kustomization, from a local directory",
		Long: `Preview prints, as one YAML stream, what kustomize-controller applies for
the Kustomization NAME of KS.yaml (or its only one) when spec.path holds DIR:

  - the kustomize build of DIR, with the kustomization.yaml Flux generates
    when there is none and the Kustomization's targetNamespace,
    namePrefix/Suffix, patches, images and components (Flux's own generator);
  - spec.postBuild substitution as the controller runs it: substituteFrom in
    order, from the ConfigMaps and Secrets of the --vars-from files (optional
    ones may be missing), the inline substitute map winning, names checked,
    substituteStrategy honoured, strict (a variable without a value or
    default fails, as in kustomize-controller ≥ v1.9) unless --strict=false;
  - the kustomize.toolkit.fluxcd.io/name and /namespace labels, and
    SOPS-encrypted Secret values masked.

The output is that of flux build kustomization NAME --path DIR
--kustomization-file KS.yaml with the same ConfigMaps and Secrets in the
cluster, byte for byte (flux build --dry-run skips substituteFrom). It stays
linear in the number of objects where flux build is quadratic. DIR is only
read.`,
		Example: `  fluxpack preview apps --path ./apps --kustomization-file clusters/prod/apps.yaml --vars-from clusters/prod/vars/configmap-cluster-vars.yaml`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			out, err := preview.File(dir, ksFile, name, varsFrom, substitute.WithStrict(strict))
			if err != nil {
				return err
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
	_ = cmd.MarkFlagRequired("path")
	_ = cmd.MarkFlagRequired("kustomization-file")
	return cmd
}
