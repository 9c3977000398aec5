// Package cli holds fluxpack's cobra commands. Each command maps its flags to
// options of one library call (packages oci, substitute, layering) and prints
// the result to stdout; logs go to stderr.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes of every fluxpack command.
const (
	ExitOK      = 0 // done, nothing to report
	ExitFinding = 1 // done, and the answer is a finding: a diff, lint problems
	ExitError   = 2 // not done: bad input, unreachable registry, refused auth
	// ExitInterrupted: stopped by SIGINT or SIGTERM (128 + SIGINT, as
	// shells report it), after cleaning up what the command had begun.
	ExitInterrupted = 130
)

// FindingError is returned by commands whose work succeeded but whose answer
// is "no" (diff found differences, lint found problems). It maps to exit 1.
type FindingError struct{ Msg string }

func (e *FindingError) Error() string { return e.Msg }

// rootFlags are the flags every command shares.
type rootFlags struct {
	debug bool
	log   *slog.Logger
}

// NewRoot builds the fluxpack command tree.
func NewRoot(version string) *cobra.Command {
	f := &rootFlags{}
	root := &cobra.Command{
		Use:   "fluxpack",
		Short: "Turn a platform's bootstrap order into Flux manifests and ship them as OCI artifacts",
		Long: `fluxpack renders a platform's layers (namespaces, CRDs, operators, custom
resources, infrastructure, apps) as race-free Flux Kustomizations, turns IaC
outputs into postBuild variables, and pushes the manifests as OCI artifacts
that Flux's OCIRepository reconciles.

Installed as flux-pack in the flux CLI's plugin directory (flux plugin
install pack), it runs as "flux pack".

Exit codes: 0 ok, 1 a finding (diff, lint), 2 an error, 130 interrupted
(SIGINT or SIGTERM; what the command had begun is cleaned up).`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			level := slog.LevelInfo
			if f.debug {
				level = slog.LevelDebug
			}
			f.log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level, ReplaceAttr: dropTime}))
		},
	}
	root.PersistentFlags().BoolVar(&f.debug, "debug", false, "log debug details to stderr (never secrets)")
	root.AddCommand(readsRepositories(newDiffCmd(f), newPreviewCmd(f), newRenderCmd(f), newLintCmd(f), newGraphCmd(f), newImportCmd(f))...)
	root.AddCommand(
		newVersionCmd(version),
		newPushCmd(f),
		newPullCmd(f),
		newTagCmd(f),
		newPromoteCmd(f),
		newListCmd(f),
		newVerifyCmd(f),
		newOutputsCmd(f),
		newFluxPatchCmd(f), newWakeCmd(f),
		newRegistryCmd(f),
		newStatusCmd(f), newWaitCmd(f),
	)
	return root
}

// dropTime leaves the time out of log lines: a CLI run is short and CI
// stamps its own lines.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func joinComma(s []string) string { return strings.Join(s, ",") }

func newVersionCmd(version string) *cobra.Command {
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "version [-o json]",
		Short: "Print fluxpack's version",
		Long: `Version prints fluxpack's version; with -o json, an object with the
version and the Go release it was built with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if out == "json" {
				return writeJSON(cmd.OutOrStdout(), struct {
					Version string `json:"version"`
					Go      string `json:"go"`
				}{version, runtime.Version()})
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), version)
			return err
		},
	}
	out.bind(cmd)
	return cmd
}

// PluginBinary is fluxpack's name as a Flux CLI plugin: `flux pack ARGS`
// runs flux-pack ARGS from the flux CLI's plugin directory.
const PluginBinary = "flux-pack"

// NameFor is the command name help and usage lines show for a binary run as
// argv0: "flux pack" for flux-pack, else "fluxpack".
func NameFor(argv0 string) string {
	if strings.TrimSuffix(filepath.Base(argv0), ".exe") == PluginBinary {
		return "flux pack"
	}
	return "fluxpack"
}

// Main runs fluxpack with args and returns the process exit code. Errors are
// printed once, to stderr, prefixed with "fluxpack: ".
func Main(ctx context.Context, version string, args []string, stdout, stderr io.Writer) int {
	return MainAs(ctx, "fluxpack", version, args, stdout, stderr)
}

// MainAs is Main with the command name usage lines show (NameFor), so that
// run as a Flux CLI plugin the help says "flux pack lint", not "fluxpack lint".
func MainAs(ctx context.Context, name, version string, args []string, stdout, stderr io.Writer) int {
	root := NewRoot(version)
	if name != root.Name() {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "fluxpack: interrupted: %v\n", optionFlags.Replace(err.Error()))
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "fluxpack: %v\n", optionFlags.Replace(err.Error()))
	var finding *FindingError
	if errors.As(err, &finding) {
		return ExitFinding
	}
	return ExitError
}
