package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/outputs"
)

func newOutputsCmd(f *rootFlags) *cobra.Command {
	var (
		format      string
		name        string
		namespace   string
		renames     []string
		valuesMap   string
		dir         string
		showSecrets bool
		sensitive   []string
	)
	formats := make([]string, len(outputs.Formats()))
	for i, ft := range outputs.Formats() {
		formats[i] = string(ft)
	}
	cmd := &cobra.Command{
		Use:   "outputs FILE --name NAME",
		Short: "Turn IaC outputs into the ConfigMap and Secret Flux postBuild.substituteFrom reads",
		Long: `Outputs reads the outputs of an IaC run and prints the objects Flux needs:
a ConfigMap NAME of the plain values and a Secret NAME of the sensitive ones,
for a Kustomization's spec.postBuild.substituteFrom, and with --values-map one
ConfigMap per service (key values.yaml) for a HelmRelease's spec.valuesFrom.

FILE is terraform/tofu output -json, pulumi stack output --json, aws
cloudformation describe-stacks, a tofu-controller outputs Secret, or a plain
.env, YAML or JSON map; the format is detected unless --format says it.

Names that are not valid Flux variable names get every character other than
a letter, digit or _ replaced by _, and a _ before a leading digit (vpc-id →
vpc_id, 1st_subnet → _1st_subnet); --rename old=new overrides. Numbers stay
exact; lists and maps become compact JSON; multi-line strings a JSON string.

Sensitive values (Terraform's sensitive, every tofu-controller output, and
the outputs named by --sensitive) go to the Secret only. Pulumi's
--show-secrets JSON, CloudFormation and plain files do not mark secrets:
name them with --sensitive. The Secret is not printed on stdout unless
--show-secrets; with -d DIR every object is written to DIR/<kind>-<name>.yaml
(the Secret 0600), all or nothing.

The values map is YAML:

  configMaps:
    - name: karpenter-values
      namespace: karpenter            # default: --namespace
      values:                         # values path: output
        settings.clusterName: cluster_name
        serviceAccount.annotations.eks\.amazonaws\.com/role-arn: karpenter_role_arn`,
		Example: `  terraform output -json > outputs.json
  fluxpack outputs outputs.json --name cluster-vars -d clusters/prod/vars`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name == "" {
				return errors.New("missing --name: the name of the ConfigMap and Secret")
			}
			rn, err := parseKeyValues("rename", renames)
			if err != nil {
				return err
			}
			m, err := outputs.RenderFile(args[0], outputs.Spec{Name: name, Namespace: namespace, ValuesMap: valuesMap},
				outputs.WithFormat(outputs.Format(format)), outputs.WithRename(rn), outputs.WithSensitive(sensitive...))
			if err != nil {
				return err
			}
			if dir != "" {
				// An interrupt until now leaves dir as it was; WriteDir
				// puts every file in place once all are written.
				testhook.At(cmd.Context(), testhook.Prepared)
				if err := cmd.Context().Err(); err != nil {
					return fmt.Errorf("writing %s: stopped before anything was put in place: %w", dir, err)
				}
				paths, err := m.WriteDir(dir)
				if err != nil {
					return err
				}
				f.log.Info("wrote outputs", "dir", dir, "files", len(paths), "plain", len(m.ConfigMap.Data), "sensitive", secretKeys(m), "values", len(m.Values))
				for _, p := range paths {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
				return nil
			}
			if m.Secret != nil && !showSecrets {
				f.log.Info("Secret not printed: it holds sensitive values; use -d DIR or --show-secrets",
					"secret", "Secret/"+m.Secret.Namespace+"/"+m.Secret.Name, "keys", secretKeys(m))
			}
			y, err := m.YAML()
			if showSecrets {
				y, err = m.SecretYAML()
			}
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(y)
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&format, "format", "", "format of FILE: "+strings.Join(formats, ", ")+" (default: detected)")
	fs.StringVar(&name, "name", "", "name of the ConfigMap and Secret (required)")
	fs.StringVar(&namespace, "namespace", "flux-system", "namespace of the objects (the Kustomization's)")
	fs.StringArrayVar(&renames, "rename", nil, "output=variable, to name a variable explicitly (repeatable)")
	fs.StringVar(&valuesMap, "values-map", "", "YAML file mapping values paths to outputs, one ConfigMap per service")
	fs.StringVarP(&dir, "output-dir", "d", "", "write the objects into this directory instead of stdout")
	fs.StringArrayVar(&sensitive, "sensitive", nil, "output to treat as sensitive, for formats that do not mark secrets: Pulumi, CloudFormation, plain files (repeatable)")
	fs.BoolVar(&showSecrets, "show-secrets", false, "print the Secret of sensitive values on stdout too")
	refuseOldOutput(cmd, "output-dir")
	return cmd
}

func secretKeys(m *outputs.Manifests) int {
	if m.Secret == nil {
		return 0
	}
	return len(m.Secret.Data)
}
