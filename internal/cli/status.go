package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/status"
)

// statusFormat is -o of status and wait: text (default) or json.
type statusFormat string

func (o *statusFormat) bind(cmd *cobra.Command, html bool) {
	usage := `output format: text or json`
	if html {
		usage = `output format: text or json; for --timeline, json or html (default: from the file's extension)`
	}
	cmd.Flags().StringVarP((*string)(o), "output", "o", "", usage)
}

func (o statusFormat) check(html bool) error {
	switch o {
	case "", "text", "json":
		return nil
	case "html":
		if html {
			return nil
		}
	}
	if html {
		return formatError(string(o), `"text", "json" or "html" (with --timeline)`)
	}
	return formatError(string(o), `"text" or "json"`)
}

// writeTimeline writes tl to file as html or json (format, else from the
// extension).
func writeTimeline(file string, format statusFormat, tl *status.Timeline) error {
	html := format == "html" || (format != "json" && strings.EqualFold(filepath.Ext(file), ".html"))
	var b bytes.Buffer
	var err error
	if html {
		err = tl.WriteHTML(&b)
	} else {
		err = writeJSON(&b, tl)
	}
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(file, b.Bytes(), 0o644)
}

func newStatusCmd(f *rootFlags) *cobra.Command {
	var (
		cluster  clusterFlags
		repo     repoFlags
		out      statusFormat
		watchF   bool
		timeline string
		timeout  time.Duration
		target   stackTarget
	)
	cmd := &cobra.Command{
		Use:   "status [ENTRY | -f STACK | --fleet FLEET --cluster NAME]",
		Short: "Show where a Flux bootstrap stands: each layer's state, what it waits on, what blocks the rest",
		Long: `Status reads the Flux objects of the cluster the kubeconfig names
($KUBECONFIG, --kubeconfig, --context): every Kustomization and HelmRelease,
flux-operator's FluxInstance and ResourceSet when the API serves them, and
their sources. It prints one line per layer along the graph their
spec.dependsOn make: Ready, Reconciling (applying or health-checking),
WaitingOn (the dependencies not Ready), SourceNotReady, Failed or
Suspended; the revision it applied against the one its source serves; since
when. Then the layers that block the rest (failed, or at the end of a chain
of waiting layers), each with the controller's message and, when a lint rule
explains it, the rule and the fix:

  failed calling webhook … connection refused   webhook-order
  no matches for kind                           crd-order
  namespaces "x" not found                      namespace-order
  a health check that never passes              health-check

With ENTRY (the folder of a Flux repository that the cluster runs, as for
fluxpack lint), status lints the tree first and attaches lint's finding on the
failing layer: the missing dependsOn and its file and line.

Status reads with one LIST per kind; --watch then watches (one WATCH per
kind, no polling) and redraws on a terminal, or prints a line per change
otherwise (with -o json, a JSON snapshot per change). --timeline FILE
watches until every layer is Ready (or --timeout, or Ctrl-C) and writes the
timeline: per layer the time spent waiting on dependencies, applying and
health-checking, the critical path, and the time lost to dependency polling
(what fluxpack wake saves); as a self-contained HTML page (-o html, or a
.html file) or JSON. When every layer is already Ready, the timeline is
reconstructed from the objects instead: each layer's creation, the moment it
became Ready and its last reconcile's duration (status.history), to the
second.

Exit 0 (status reports; see fluxpack wait for a verdict), 2 when the cluster
cannot be read.`,
		Example: `  fluxpack status
  fluxpack status clusters/production --context prod
  fluxpack status -f platform/stack.yaml
  fluxpack status --fleet platform/fleet.yaml --cluster prod
  fluxpack status --watch
  fluxpack status --timeline bootstrap.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(timeline != ""); err != nil {
				return err
			}
			if err := target.check(args); err != nil {
				return err
			}
			ctx, cancel := timeoutContext(cmd.Context(), timeout)
			defer cancel()
			var w *status.Watcher
			var err error
			if target.set() {
				w, err = target.watcher(ctx, cluster, &repo, f.log)
			} else {
				w, err = cluster.watcher(ctx, &repo, args, f.log)
			}
			if err != nil {
				return err
			}
			stdout := cmd.OutOrStdout()
			if !watchF && timeline == "" {
				snap, err := w.Snapshot(ctx)
				if err != nil {
					return err
				}
				if out == "json" {
					return writeJSON(stdout, statusJSON(snap))
				}
				return snap.WriteText(stdout)
			}
			return watchStatus(ctx, w, stdout, cmd.ErrOrStderr(), out, watchF, timeline)
		},
	}
	cluster.bind(cmd)
	repo.bind(cmd)
	out.bind(cmd, true)
	cmd.Flags().BoolVarP(&watchF, "watch", "w", false, "watch: redraw on a terminal, a line per change otherwise")
	cmd.Flags().StringVar(&timeline, "timeline", "", "watch until every layer is Ready and write the bootstrap's timeline to this file (HTML or JSON)")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "stop watching after this long (0: until Ctrl-C, or with --timeline until every layer is Ready)")
	target.stack.bind(cmd)
	cmd.Flags().StringVar((*string)(&target.fleet), "fleet", "", "fleet file (apiVersion fluxpack.dev/v1alpha1, kind Fleet): lay the cluster out along its --cluster's stack")
	cmd.Flags().StringVar(&target.cluster, "cluster", "", "with --fleet: the cluster of the fleet file the kubeconfig reaches")
	return cmd
}

// snapshotJSON is status -o json: the snapshot and its blocking layers.
type snapshotJSON struct {
	*status.Snapshot
	Blocking []status.Blocker `json:"blocking"`
	Done     bool             `json:"done"`
}

func statusJSON(s *status.Snapshot) snapshotJSON {
	return snapshotJSON{Snapshot: s, Blocking: s.Blocking(), Done: s.Done("")}
}

// watchStatus follows the snapshots of a watch until ctx ends (or, with a
// timeline, until every layer is Ready).
func watchStatus(ctx context.Context, w *status.Watcher, stdout, stderr io.Writer, out statusFormat, watchF bool, timeline string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snaps, err := w.Watch(ctx)
	if err != nil {
		return err
	}
	var rec *status.Recorder
	tty := out != "json" && isTerminal(stdout)
	var first *status.Snapshot
	for snap := range snaps {
		if rec == nil {
			rec, first = status.NewRecorder(snap.At), snap
		}
		rec.Add(snap)
		if watchF {
			var err error
			switch {
			case out == "json":
				err = writeJSONLine(stdout, statusJSON(snap))
			case tty:
				fmt.Fprint(stdout, "\x1b[H\x1b[2J")
				err = snap.WriteText(stdout)
			case snap.Changed == nil:
				err = snap.WriteText(stdout)
			default:
				err = snap.WriteChanges(stdout)
			}
			if err != nil {
				return err
			}
		}
		if timeline != "" && snap.Done("") {
			cancel()
		}
	}
	werr := w.Err()
	if timeline != "" && rec != nil {
		if err := saveTimeline(timeline, out, rec, first, stderr); err != nil {
			return errors.Join(werr, err)
		}
	}
	return werr
}

// saveTimeline writes the recorded timeline, or, when every layer was
// Ready at the first snapshot, the one Reconstruct draws from it.
func saveTimeline(file string, out statusFormat, rec *status.Recorder, first *status.Snapshot, stderr io.Writer) error {
	tl := rec.Timeline()
	if first != nil && first.Done("") {
		tl = status.Reconstruct(first)
		fmt.Fprintln(stderr, "every layer was Ready before the recording began: the timeline is reconstructed from the objects' timestamps (whole seconds) and their last reconcile's duration")
	}
	if err := writeTimeline(file, out, tl); err != nil {
		return fmt.Errorf("writing the timeline: %w", err)
	}
	fmt.Fprintf(stderr, "timeline written to %s: %.1fs, critical path %s, %.1fs lost to dependency polling on it\n",
		file, tl.Total, strings.Join(tl.CriticalPath, " -> "), tl.LostOnPath)
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
