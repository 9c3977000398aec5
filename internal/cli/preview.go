package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/substitute"
)

func newPreviewCmd(_ *rootFlags) *cobra.Command {
	var (
		path        string
		ksFile      string
		name        string
		varsFrom    []string
		strict      bool
		showSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "preview --path DIR --kustomization-file KS.yaml",
		Short: "Print the objects kustomize-controller would apply for a Kustomization",
		Long: `Preview prints, as a YAML stream, what kustomize-controller would apply for
the Flux Kustomization in KS.yaml with DIR as its spec.path: the same output
as flux build kustomization NAME --path DIR --kustomization-file KS.yaml
--dry-run, with substituteFrom served from files.

  - DIR is built with kustomize as Flux builds it; without a
    kustomization.yaml one is generated from every YAML file and every
    sub-directory holding a kustomization (minus .sourceignore matches), and
    targetNamespace, namePrefix, nameSuffix, patches, images, components
    and buildMetadata are applied.
  - spec.postBuild substitutes variables exactly as Flux does: inline
    substitute, substituteFrom read from the ConfigMaps and Secrets of the
    --vars-from files (a missing one fails unless optional), strict by
    default as kustomize-controller >= v1.9 (flux build's default is
    --strict-substitute=false), objects labelled or annotated
    kustomize.toolkit.fluxcd.io/substitute: disabled left alone.
  - The kustomize.toolkit.fluxcd.io/name and /namespace labels and
    spec.commonMetadata are set.

Values taken from a --vars-from Secret are printed as REDACTED unless
--show-secrets. DIR is never written to.`,
		Example: `  fluxpack outputs tf.json --name cluster-vars -o vars
  fluxpack preview --path ./apps --kustomization-file clusters/prod/apps.yaml \
    --vars-from vars/configmap-cluster-vars.yaml --vars-from vars/secret-cluster-vars.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" || ksFile == "" {
				return errors.New("missing --path or --kustomization-file")
			}
			opts := []substitute.PreviewOption{substitute.WithVarsFrom(varsFrom...), substitute.WithStrictSubstitute(strict)}
			if !showSecrets {
				opts = append(opts, substitute.WithRedactedSecrets())
			}
			out, err := substitute.PreviewFile(path, ksFile, name, opts...)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&path, "path", "", "directory to build, the Kustomization's spec.path (required)")
	fs.StringVar(&ksFile, "kustomization-file", "", "YAML file holding the Flux Kustomization (required)")
	fs.StringVar(&name, "name", "", "name of the Kustomization in the file (default: the only one)")
	fs.StringArrayVar(&varsFrom, "vars-from", nil, "YAML file of ConfigMaps and Secrets for spec.postBuild.substituteFrom (repeatable)")
	fs.BoolVar(&strict, "strict-substitute", true, "fail on a variable without a value or default, as kustomize-controller does")
	fs.BoolVar(&showSecrets, "show-secrets", false, "print the values taken from --vars-from Secrets instead of REDACTED")
	return cmd
}
