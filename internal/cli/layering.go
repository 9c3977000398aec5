package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/layering"
)

// stackFlag is -f, the stack file of render, lint and graph.
type stackFlag string

func (s *stackFlag) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP((*string)(s), "file", "f", "", "stack file (apiVersion fluxpack.dev/v1alpha1, kind Stack)")
	_ = cmd.MarkFlagRequired("file")
}

func newRenderCmd(f *rootFlags) *cobra.Command {
	var (
		stack                stackFlag
		dir, outputs, secret string
	)
	cmd := &cobra.Command{
		Use:   "render -f STACK -o DIR [--outputs FILE] [--secret-file FILE]",
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
their names (never their values) are logged.

DIR is replaced atomically, and only if it is empty or holds a previous render.
A stack with any problem (unknown field, invalid name, cycle, unknown
dependency, missing path, unreadable outputs) is refused with every problem
listed, and nothing is written. Prints the files written.`,
		Example: `  fluxpack render -f platform/stack.yaml -o platform/flux
  terraform output -json > outputs.json
  fluxpack render -f platform/stack.yaml --outputs outputs.json --secret-file ../cluster-vars.secret.yaml -o platform/flux`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opts []layering.RenderOption
			if outputs != "" {
				opts = append(opts, layering.WithOutputs(outputs))
			}
			if secret != "" {
				opts = append(opts, layering.WithSecretFile(secret))
			}
			r, err := layering.RenderFile(string(stack), dir, opts...)
			if err != nil {
				return err
			}
			f.log.Info("rendered", "stack", r.Plan.Name, "layers", len(r.Plan.Layers), "dir", dir)
			if len(r.LeftOut) > 0 {
				f.log.Warn("sensitive outputs left out: give --secret-file to write their Secret", "outputs", strings.Join(r.LeftOut, ","))
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
	cmd.Flags().StringVarP(&dir, "output", "o", "", "directory to write the manifests to")
	cmd.Flags().StringVar(&outputs, "outputs", "", "IaC outputs file for the stack's vars entry, instead of the one the stack names")
	cmd.Flags().StringVar(&secret, "secret-file", "", "file to write the vars Secret (sensitive outputs) to, outside the output directory")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func newLintCmd(*rootFlags) *cobra.Command {
	var (
		stack stackFlag
		out   outputFlag
	)
	cmd := &cobra.Command{
		Use:   "lint -f STACK",
		Short: "Find the orders that race in a stack before they reach a cluster",
		Long: `Lint reads every layer's manifests (the kustomize build kustomize-controller
would do) and reports, with the layer, the object and file:line:

  graph            unknown dependency, cycle, duplicate or invalid name
  path             a layer's path is missing or does not build
  crd-order        a custom resource whose CRD is not in a layer it depends on
  webhook-order    a custom resource not behind the operator serving its webhook
  operator-wait    an operator layer without wait or health checks
  namespace-order  an object in a namespace no layer it depends on creates
  crd-prune        prune: true on a layer holding CRDs
  helm-crds        a HelmRelease installing CRDs in the layer that uses them
  variables        a ${var} Flux would fail on or retype (package substitute's
                   checks), against the layer's own postBuild sources: its
                   inline substitute, the vars entries' IaC outputs, the
                   ConfigMaps and Secrets its ancestor layers create

Lint reads files only; kustomizations pointing at URLs are findings, not
fetched. Exit 0 clean, 1 findings, 2 a stack file that cannot be read.`,
		Example: `  fluxpack lint -f platform/stack.yaml -o json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			rep, err := layering.LintFile(cmd.Context(), string(stack))
			if err != nil {
				return err
			}
			if out == "json" {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				for _, fd := range rep.Findings {
					b.WriteString(fd.String() + "\n")
				}
				if _, err := fmt.Fprint(cmd.OutOrStdout(), b.String()); err != nil {
					return err
				}
			}
			if n := len(rep.Findings); n > 0 {
				return &FindingError{Msg: fmt.Sprintf("%d findings in %d layers, %d objects", n, rep.Layers, rep.Objects)}
			}
			return nil
		},
	}
	stack.bind(cmd)
	out.bind(cmd)
	return cmd
}

func newGraphCmd(*rootFlags) *cobra.Command {
	var (
		stack  stackFlag
		format string
	)
	cmd := &cobra.Command{
		Use:   "graph -f STACK [--format mermaid|dot|tree]",
		Short: "Draw a stack's layers, how each becomes Ready, and its critical path",
		Long: `Graph builds the stack file and draws its dependency DAG: each layer with its
kind (Kustomization or HelmRelease) and how it becomes Ready (wait, health
checks, no wait), and the critical path: the longest chain of layers that
become Ready one after another.

  mermaid  a flowchart that renders on GitHub (critical path in red)
  dot      Graphviz
  tree     like flux tree kustomization, one tree per layer nothing depends on`,
		Example: `  fluxpack graph -f platform/stack.yaml --format mermaid`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := layering.GraphFile(string(stack), format)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	stack.bind(cmd)
	cmd.Flags().StringVar(&format, "format", layering.GraphTree, "output format: "+strings.Join(layering.GraphFormats, ", "))
	return cmd
}
