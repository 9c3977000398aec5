package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/review"
)

// reviewFlags are the flags of diff ENTRY: what to compare with, and how
// to show it.
type reviewFlags struct {
	base, baseDir string
	all           bool
	strip         []string
	exitZero      bool
	limit         int
	reports       []string // FORMAT=FILE: the report written to FILE too
}

func newDiffCmd(f *rootFlags) *cobra.Command {
	var (
		out          string
		ignorePaths  []string
		allowSecrets bool
		rf           reviewFlags
		repo         repoFlags
		charts       chartFlags
		stack        stackFlag
		fleetFile    fleetFlag
	)
	cmd := &cobra.Command{
		Use:   "diff (ENTRY... | -f STACK | --fleet FLEET) [--base REV | --base-dir DIR] | diff DIR oci://HOST/REPOSITORY:TAG",
		Short: "Show what a change does to a cluster, or compare a directory with a tag",
		Long: `With ENTRY, diff shows what a change to a Flux repository does to the
cluster whose entry point ENTRY is (typically clusters/<name>; give several
for several clusters of the repository): it reads the
tree at the base and as it is now, renders what kustomize-controller and
helm-controller would apply on both sides with fluxpack's one engine, and
reports:

  objects    added, removed and changed objects, matched by kind, namespace
             and name; fields by path, list entries by their name (a reorder
             is a move, not churn), entries of other lists by content (an
             insertion is one insertion); multi-line strings as a line diff;
             Secret values and SOPS ciphertexts never printed; labels and
             annotations that change with every release (helm.sh/chart,
             checksum/*) left out, --strip-attr adds more
  races      lint findings the change introduces, and those it fixes, and
             in how many layers lint could check races (why not the rest)
  bootstrap  layers and dependsOn edges added and removed, and what the
             critical path costs a new cluster before and after
  images     container images added, removed and retagged (read from a
             HelmRelease's values when its chart is not rendered, and said so)

The base is --base REV, a revision of the same Git repository read without a
checkout (default: the merge-base of HEAD with its upstream branch), or
--base-dir DIR, a second copy of the repository. Files Git ignores
(.gitignore, .git/info/exclude, core.excludesFile) are no changed files. By
default only the Kustomizations and HelmReleases whose inputs the changed files feed are
rendered (files under their path and bases, the sources, valuesFrom and
substituteFrom objects they read); --all renders every one. A producer that
does not render on a side is listed, and its objects are left out on both
sides rather than shown as added or removed: the report counts the
producers rendered, not rendered and skipped. A HelmRelease is named as its
Kustomization substitutes it (HelmRelease/media/radarr, not .../${APP}).

-o sets the format: "" (text, coloured on a terminal unless $NO_COLOR is
set and not empty, or $TERM is dumb), markdown (a pull-request comment: a
summary table, then one collapsible section per object, cut to --limit
characters), github (workflow commands: a group with the report, an
annotation per new finding), sarif (the new findings, for code scanning),
unified (a patch of every changed object) or json (a list, one report per
ENTRY). --report FORMAT=FILE writes the same report in another format to
FILE as well (repeatable; text is "text"): a CI job that prints annotations
and posts a comment reviews once. Exit code: 0 no change, 1 changes (0
with --exit-zero), 2 error.

With -f STACK (or --fleet FLEET, every cluster of it), diff compares a
stack file's two versions the same way: the Flux objects the stack renders,
each layer's manifests as kustomize-controller builds them (before the
stack's variables, which IaC outputs give at render time), lint's findings
and the bootstrap order. An outputs file outside the repository, or ignored
by Git, is in no revision: both sides read it from the working tree, and
the report says so.

With DIR and oci://…:TAG, diff compares the artifact DIR would make with
what the tag holds and lists the files that differ: + added, - removed, ~
modified (content or mode); then, for the YAML files among them, the objects
added, removed and changed, field by field, as for ENTRY (the tag is what
the cluster's OCIRepository holds now). Exit code: 0 identical, 1 differs or the tag does
not exist (the output says which), 2 error.`,
		Example: `  fluxpack diff clusters/production --base origin/main
  fluxpack diff clusters/production --base-dir ../platform-main -o markdown
  fluxpack diff ./platform oci://ghcr.io/acme/platform:prod`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case stack != "" || fleetFile != "":
				if len(args) > 0 || stack != "" && fleetFile != "" {
					return fmt.Errorf("give one of ENTRY..., -f STACK and --fleet FLEET")
				}
				kind, file := reviewStack, string(stack)
				if fleetFile != "" {
					kind, file = reviewFleet, string(fleetFile)
				}
				return runReview(cmd, f, kind, []string{file}, out, &rf, &repo, &charts)
			case len(args) == 0:
				return fmt.Errorf("give ENTRY..., -f STACK, --fleet FLEET, or DIR and oci://HOST/REPOSITORY:TAG")
			case len(args) != 2 || !strings.HasPrefix(args[1], "oci://"):
				return runReview(cmd, f, reviewEntry, args, out, &rf, &repo, &charts)
			}
			if out != "" && out != "json" {
				return formatError(out, `"json" or nothing for a tag`)
			}
			if len(rf.reports) > 0 {
				return fmt.Errorf("--report writes the report of diff ENTRY, -f STACK or --fleet FLEET; with DIR and a tag, use -o")
			}
			if rf.base != "" || rf.baseDir != "" {
				return fmt.Errorf("--base and --base-dir compare an ENTRY; with DIR and a tag, give only the two")
			}
			reg := &charts.registry // one set of registry flags: the tag's, and --charts online's
			opts := append(as[oci.DiffOption](reg.options(f.log)), oci.WithIgnorePaths(ignorePaths...))
			if allowSecrets {
				opts = append(opts, oci.WithAllowSecrets())
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			res, err := oci.Diff(ctx, args[0], args[1], opts...)
			if err != nil {
				return err
			}
			var objects []review.ObjectChange
			if res.Status == oci.Differs {
				if objects, err = tagObjects(ctx, args[0], args[1], res, as[oci.PullOption](reg.options(f.log))); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			if out == "json" {
				err = writeJSON(w, struct {
					*oci.DiffResult
					Objects []review.ObjectChange `json:"objects,omitempty"`
				}{res, objects})
			} else {
				err = printDiff(w, args[1], res)
				if err == nil && len(objects) > 0 {
					err = review.WriteObjectChanges(w, objects, review.TextOptions{Color: useColor(w)})
				}
			}
			if err != nil {
				return err
			}
			switch res.Status {
			case oci.Differs:
				return &FindingError{Msg: fmt.Sprintf("%s differs from %s", args[0], args[1])}
			case oci.Missing:
				return &FindingError{Msg: fmt.Sprintf("%s does not exist", args[1])}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `output format: "" (text), markdown, github, sarif, unified or json ("" or json for a tag)`)
	cmd.Flags().StringSliceVar(&ignorePaths, "ignore-paths", nil, "with a tag: more paths to ignore, .gitignore syntax")
	cmd.Flags().BoolVar(&allowSecrets, "allow-secrets", false, "with a tag: allow plaintext Kubernetes Secrets and IaC outputs files in the directory")
	fs := cmd.Flags()
	fs.StringVar(&rf.base, "base", "", "the Git revision to compare with (default: the merge-base of HEAD with its upstream branch)")
	fs.StringVar(&rf.baseDir, "base-dir", "", "a second copy of the repository to compare with, instead of a Git revision")
	fs.BoolVar(&rf.all, "all", false, "render every Kustomization and HelmRelease, not only those the changed files feed")
	fs.StringArrayVar(&rf.strip, "strip-attr", nil, "a label or annotation key (or pattern, such as example.com/*) to leave out of the comparison (repeatable)")
	fs.BoolVar(&rf.exitZero, "exit-zero", false, "exit 0 when there are changes, for jobs that only comment")
	fs.IntVar(&rf.limit, "limit", 0, "with -o markdown: the most characters to write (default 60000, for a pull-request comment)")
	fs.StringArrayVar(&rf.reports, "report", nil, "FORMAT=FILE: write the report in FORMAT (text, markdown, github, sarif, unified, json) to FILE as well (repeatable)")
	stack.bind(cmd)
	fleetFile.bind(cmd)
	repo.bind(cmd)
	repo.bindLint(cmd)
	charts.bind(cmd)
	return cmd
}

// What diff compares: entry points of a Flux repository, a stack file, or
// a fleet file.
const (
	reviewEntry = iota
	reviewStack
	reviewFleet
)
