package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

func newLintCmd(f *rootFlags) *cobra.Command {
	var (
		stack     stackFlag
		fleetFile fleetFlag
		repo      repoFlags
		charts    chartFlags
		out       outputFlag
	)
	cmd := &cobra.Command{
		Use:   "lint [ENTRY | -f STACK | --fleet FLEET]",
		Short: "Find the orders that race, in a stack file or in the Flux repository a cluster runs",
		Long: `Lint reads every layer's manifests (the build kustomize-controller would do)
and reports, with the layer, the object and file:line:

  graph            unknown dependency, cycle, duplicate or invalid name
  path             a layer's path is missing or does not build
  source           a layer's source cannot be read offline (its objects are unknown)
  crd-order        a custom resource whose CRD is not in a layer applied before it
  webhook-order    a custom resource not behind the operator serving its webhook
  operator-wait    an operator layer without wait or health checks
  namespace-order  an object in a namespace no layer applied before it creates
  crd-prune        prune: true on a layer holding CRDs
  helm-crds        a HelmRelease installing CRDs in the layer that uses them
  chart            a HelmRelease whose chart does not render, as helm-controller would fail
  health-check     a health check on an object no layer (applied before) creates
  substitute-from  a substituteFrom source that nothing creates, or that races the layer
  no-postbuild     a ${var} of the platform's variables (one a postBuild provides,
                   or substitutes in other layers) in a layer without postBuild
  variables        a ${var} Flux would fail on or retype (package substitute's
                   checks), against the layer's own postBuild sources
  dual-owner       an object two layers apply: they fight over it, a dependsOn
                   on one does not hold for it, and either's prune deletes it
  cross-namespace-ref  with --no-cross-namespace-refs: a Kustomization's or
                   HelmRelease's source in another namespace, which the
                   locked-down controllers refuse
  merge            (a hint) layers that could be one Kustomization with no
                   race: kustomize-controller applies CRDs, Namespaces and
                   ClusterRoles first and waits until CRDs are established,
                   so a dependsOn to such a layer (or to one nobody waits
                   for) only costs time: up to --requeue-dependency (30s in
                   stock Flux) per edge of the critical path

ENTRY is a Flux entry point: the folder (or file) kustomize-controller
applies for a cluster, typically clusters/<name>. Lint builds it as Flux
does, follows every Kustomization's spec.path in its source, recursively,
and lints the whole tree; the repository itself is the source
GitRepository/flux-system/flux-system (--source maps others), and objects
made outside it, such as Terraform's ConfigMap of cluster variables, are
declared with --external. With -f, lint reads a fluxpack stack file;
--external adds to its spec.external, and --root and --source, which say how
to read a repository, are refused. With --fleet, lint reads a fleet file and
lints every cluster's stack: a finding all clusters share is printed once
("all clusters: …"), the others with their cluster ("cluster prod: …").

HelmReleases' charts are rendered as helm-controller renders them (values
merged in its order, post-renderers) when lint can have them: a chart folder in
a source it reads, one of the --charts folders, or with --charts online its
OCI registry (pulled with the registry flags); their CRDs, webhooks and
namespaces count for every rule. A chart it cannot have falls back on a table
of well-known operators (--operator adds to it), and findings that rely on it
say the webhook is assumed.

A problem found at several places (a ${var} nothing sets, used in many objects;
one custom resource per namespace applied before its CRD) is one finding, at
its first place, with every place listed under it, file:line and object ("places"
with -o json).

Lint reads files only, but for the charts --charts online pulls;
kustomizations pointing at URLs are findings, not fetched. Hints (merge) are
printed after the findings, marked "hint:" (severity "hint" with -o json), and
do not fail lint. Each source lint could not read follows the findings, once,
with why and the layers it leaves unchecked ("not checked (source): …"), and
with --sources online or --charts online each chart it could not fetch.
Whatever the result, stderr
gets one summary line (what was
found, how much could be checked) and nothing else: logs, such as the files
left out as Flux leaves them out, only with --debug. On a terminal the
findings are coloured (file:line bold, the rule red for an error, yellow for a
warning, cyan for a hint); $NO_COLOR or TERM=dumb turns that off. Exit 0 clean or only
hints, 1 findings, 2 an input that cannot be read.`,
		Example: `  fluxpack lint clusters/production
  fluxpack lint clusters/production --external ConfigMap/flux-system/cluster-vars -o json
  fluxpack lint -f platform/stack.yaml --charts charts/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if fleetFile != "" && (stack != "" || len(args) > 0) {
				return fmt.Errorf("give one of ENTRY, -f STACK and --fleet FLEET")
			}
			var entry string
			if fleetFile == "" {
				var err error
				if entry, err = stackOrEntry(stack, args); err != nil {
					return err
				}
			}
			ctx, chartOpts, done, err := charts.lintOptions(cmd.Context(), f.log)
			if err != nil {
				return err
			}
			defer done()
			if fleetFile != "" {
				opts, err := repo.stackLintOptions()
				if err != nil {
					return err
				}
				cmd.SetContext(ctx)
				return lintFleet(cmd, string(fleetFile), out, append(opts, chartOpts...))
			}
			var rep *lint.Report
			if entry != "" {
				opts, err := repo.options()
				if err != nil {
					return err
				}
				opts = append(opts, charts.readOptions()...)
				if f.debug {
					// What the read leaves out as Flux does (symlinks, say)
					// is a log: stderr holds the summary line alone
					// unless --debug.
					opts = append(opts, fluxrepo.WithLogger(f.log))
				}
				rep, err = lint.Tree(ctx, entry, opts, slices.Concat(chartOpts, repo.lintOptions(), []lint.Option{lint.WithDiscovery(repo.discovery())})...)
				if err != nil {
					return err
				}
			} else {
				opts, err := repo.stackLintOptions()
				if err != nil {
					return err
				}
				if rep, err = lint.File(ctx, string(stack), slices.Concat(opts, chartOpts, repo.lintOptions(), []lint.Option{lint.WithDiscovery(repo.discovery())})...); err != nil {
					return err
				}
			}
			return writeLint(cmd, out, rep, rep.Summary(), rep.Failing(), func(b *strings.Builder, color bool) {
				for _, fd := range rep.Findings {
					b.WriteString(findingLine("", fd, color))
				}
				// The sources lint could not read, and why, once each
				// (the summary says only how many layers they leave
				// unchecked); the charts too when it fetched them.
				for _, c := range rep.Coverage {
					if c.Cause != lint.CoverageSource && !charts.fetches() {
						continue
					}
					for _, why := range c.Reasons() {
						b.WriteString("not checked (" + c.Cause + "): " + why + "\n")
					}
				}
			})
		},
	}
	stack.bind(cmd)
	fleetFile.bind(cmd)
	repo.bind(cmd)
	repo.bindLint(cmd)
	charts.bind(cmd)
	out.bind(cmd)
	return cmd
}

// writeLint prints a lint report: as JSON with -o json, else the lines
// text writes; then one summary line on stderr, findings or not (a
// FindingError, exit 1, when a finding fails lint).
func writeLint(cmd *cobra.Command, out outputFlag, rep any, summary string, failing int, text func(b *strings.Builder, color bool)) error {
	if out == "json" {
		if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		text(&b, useColor(cmd.OutOrStdout()))
		if _, err := fmt.Fprint(cmd.OutOrStdout(), b.String()); err != nil {
			return err
		}
	}
	if failing > 0 {
		return &FindingError{Msg: summary}
	}
	_, err := fmt.Fprintln(cmd.ErrOrStderr(), "fluxpack: "+summary)
	return err
}
