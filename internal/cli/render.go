package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/render"
)

// stackFlag is -f, the stack file of render, lint and graph.
type stackFlag string

func (s *stackFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(s), "file", "f", "", "stack file (apiVersion fluxpack.dev/v1alpha1, kind Stack)")
}

func newRenderCmd(f *rootFlags) *cobra.Command {
	var (
		stack                                        stackFlag
		fleetFile                                    fleetFlag
		dir, outputs, secret, secretDir, receiverURL string
		verifyKey, verifyPolicy                      string
		verifyCerts                                  []string
		allowSecrets                                 bool
	)
	cmd := &cobra.Command{
		Use:   "render (-f STACK | --fleet FLEET) -d DIR [--outputs FILE] [--secret-file FILE | --secret-dir DIR]",
		Short: "Render a stack file as Flux manifests: one Kustomization per layer, the OCIRepository and the vars ConfigMap",
		Long: `Render builds the stack file and writes, to DIR: kustomization.yaml,
source.yaml (the stack's OCIRepository), layers/<layer>.yaml (a Flux
Kustomization per layer) and releases/<layer>/helmrelease.yaml for HelmRelease
layers. Every default is written out; the output is the same byte for byte on
every run.

For each spec.vars entry with an IaC outputs file (terraform/tofu output -json,
pulumi stack output --json, CloudFormation, tofu-controller, .env, YAML, JSON;
--outputs replaces the file of the stack's one vars entry), the plain outputs
become vars/configmap-<name>.yaml, listed in kustomization.yaml, which every
layer reads through spec.postBuild.substituteFrom. The sensitive outputs go to
a Secret of the same name, written only to --secret-file (mode 0600, outside
DIR: DIR is meant to be pushed, a plaintext Secret must not be; apply it out of
band or encrypt it with SOPS); without --secret-file they are left out, and
their names (never their values) are logged. An outputs file inside the
stack's folder (the folder push ships) is refused unless --allow-secrets:
keep it outside, as push refuses it too.

A stack with spec.wake also gets wake.yaml: a notification-controller
Provider, Alert and Receiver that request a reconcile of a layer's dependents
the moment it becomes Ready, so that stock Flux does not leave them polling
every --requeue-dependency (30s). They read the wake Secret (a token, and the
Receiver's URL, which holds a digest of the token), which goes to
--secret-file like the vars Secret; rendering again keeps its token.
--receiver-url says where notification-controller reaches its webhook receiver
(default: the stack's wake.receiverURL, else
http://webhook-receiver.flux-system.svc.cluster.local). Without the Secret in
the cluster the layers poll, as without wake.

A stack whose source verifies signatures (source.verify: {provider: cosign,
secretRef: {name: cosign-pub}}) makes source-controller refuse an artifact
that is unsigned, signed by another key or moved since signing; --verify-key
cosign.pub writes the Secret it names, holding the key as cosign.pub, to
--secret-file: it must be in the cluster before the artifact, never in it.
For source.verify {provider: notation, …}, --verify-cert ca.crt (repeatable)
writes the Secret holding the certificates (ca.crt, or ca-0.crt, … one
certificate a key, as source-controller reads the first of each) and
trustpolicy.json: --verify-trust-policy's file, or a strict policy for the
source's repository trusting those certificates.

With --fleet, every cluster of the fleet file is rendered, each to
DIR/<cluster>/ as above (its own OCIRepository, vars ConfigMap, wake), each
cluster's Secrets to --secret-dir/<cluster>.secret.yaml; every cluster is
rendered in memory before any is written.

DIR is replaced atomically, and only if it is empty or holds a previous render.
A stack with any problem (unknown field, invalid name, cycle, unknown
dependency, missing path, unreadable outputs) is refused with every problem
listed, and nothing is written. Prints the files written.`,
		Example: `  fluxpack render -f platform/stack.yaml -d platform/flux
  terraform output -json > outputs.json
  fluxpack render -f platform/stack.yaml --outputs outputs.json --secret-file ../cluster-vars.secret.yaml -d platform/flux
  fluxpack render --fleet platform/fleet.yaml --secret-dir ../secrets -d out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var verify []render.Option
			if verifyKey != "" {
				verify = append(verify, render.WithVerifyKey(verifyKey))
			}
			switch {
			case len(verifyCerts) > 0:
				verify = append(verify, render.WithVerifyNotation(verifyPolicy, verifyCerts...))
			case verifyPolicy != "":
				return fmt.Errorf("--verify-trust-policy needs --verify-cert")
			}
			switch {
			case (stack == "") == (fleetFile == ""):
				return fmt.Errorf("give a stack file with -f or a fleet file with --fleet")
			case fleetFile != "" && (outputs != "" || secret != ""):
				return fmt.Errorf("--outputs and --secret-file are per stack: a fleet names each cluster's outputs; use --secret-dir")
			case fleetFile != "":
				return renderFleet(cmd.Context(), cmd.OutOrStdout(), f.log, string(fleetFile), dir, secretDir, receiverURL, verify)
			case secretDir != "":
				return fmt.Errorf("--secret-dir is for --fleet; use --secret-file")
			}
			if !allowSecrets {
				if err := checkStackInputs(string(stack), outputs); err != nil {
					return err
				}
			}
			var opts []render.Option
			if outputs != "" {
				opts = append(opts, render.WithOutputs(outputs))
			}
			if secret != "" {
				opts = append(opts, render.WithSecretFile(secret))
			}
			if receiverURL != "" {
				opts = append(opts, render.WithReceiverURL(receiverURL))
			}
			opts = append(opts, verify...)
			r, err := render.StackFile(cmd.Context(), string(stack), dir, opts...)
			if err != nil {
				return err
			}
			f.log.Info("rendered", "stack", r.Plan.Name, "layers", len(r.Plan.Layers), "dir", dir)
			if len(r.LeftOut) > 0 {
				f.log.Warn("sensitive outputs left out: give --secret-file to write their Secret", "outputs", strings.Join(r.LeftOut, ","))
			}
			if r.WakeLeftOut {
				f.log.Warn("wake Secret left out: give --secret-file to write it; without it the layers poll their dependencies")
			}
			var b strings.Builder
			for _, file := range r.Files {
				b.WriteString(file + "\n")
			}
			if r.SecretFile != "" {
				b.WriteString(r.SecretFile + "\n")
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
			return err
		},
	}
	stack.bind(cmd)
	fleetFile.bind(cmd)
	cmd.Flags().StringVarP(&dir, "output-dir", "d", "", "directory to write the manifests to")
	cmd.Flags().StringVar(&secretDir, "secret-dir", "", "with --fleet: directory to write each cluster's Secrets to, outside the output directory")
	cmd.Flags().StringVar(&outputs, "outputs", "", "IaC outputs file for the stack's vars entry, instead of the one the stack names")
	cmd.Flags().StringVar(&secret, "secret-file", "", "file to write the vars Secret (sensitive outputs) and the wake Secret to, outside the output directory")
	cmd.Flags().StringVar(&verifyKey, "verify-key", "", "cosign public key (PEM) whose Secret, named by the stack's source.verify.secretRef, goes to --secret-file")
	cmd.Flags().StringArrayVar(&verifyCerts, "verify-cert", nil, "notation CA certificate (PEM) for the Secret of the stack's source.verify.secretRef, to --secret-file (repeatable)")
	cmd.Flags().StringVar(&verifyPolicy, "verify-trust-policy", "", "notation trust policy for that Secret (default: strict, the source's repository, the --verify-cert certificates)")
	cmd.Flags().StringVar(&receiverURL, "receiver-url", "", "where notification-controller reaches its webhook receiver, for the wake Secret of a stack with spec.wake")
	cmd.Flags().BoolVar(&allowSecrets, "allow-secrets", false, "render even when an IaC outputs file lies inside the stack's folder, which push ships")
	_ = cmd.MarkFlagRequired("output-dir")
	refuseOldOutput(cmd, "output-dir")
	return cmd
}
