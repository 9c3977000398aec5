package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/status"
)

func newWaitCmd(f *rootFlags) *cobra.Command {
	var (
		wf       waitFlags
		repo     repoFlags
		out      statusFormat
		revision string
		timeout  time.Duration
		timeline string
	)
	cmd := &cobra.Command{
		Use:   "wait [ENTRY]",
		Short: "Wait until every Flux layer applied the revision and is Ready; fail fast when one will not be",
		Long: `Wait watches the Flux objects of the cluster the kubeconfig names, as
fluxpack status reads them (one LIST and one WATCH per kind, no polling), until
every layer (Kustomization, HelmRelease, FluxInstance, ResourceSet) is Ready
for its generation and every Kustomization applied the revision: --revision
(tag@sha256:digest, or the digest alone), by default the one its source
serves now.

It gives up as soon as a layer fails in a way that will not heal without a
change: a terminal failure (Stalled=True, or a build failure of the revision
its source serves), a suspended layer without the revision, or the same
error for longer than --stalled (default 2m: longer than Flux's 30s
dependency requeue and a typical 1m retryInterval, so a race that heals on
the next retry passes). It names the layer, the controller's message and the
lint rule that explains it, as fluxpack status does (with ENTRY, lint's
finding on the tree too).

Progress goes to stderr, a line per change; the final status to stdout
(text, or -o json). --timeline FILE writes the bootstrap's timeline as
fluxpack status --timeline does. fluxpack push --wait and promote --wait
wait the same way for the artifact they pushed or promoted.

Exit 0 every layer Ready with the revision, 1 a layer failed (terminal,
stalled or suspended), 2 an error or --timeout.`,
		Example: `  fluxpack push . oci://ghcr.io/org/platform:main && fluxpack wait
  fluxpack wait --revision sha256:4f3c… --timeout 15m
  fluxpack wait clusters/production --stalled 30s --timeline bootstrap.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(timeline != ""); err != nil {
				return err
			}
			ctx, cancel := timeoutContext(cmd.Context(), timeout)
			defer cancel()
			w, err := wf.cluster.watcher(ctx, &repo, args, f.log)
			if err != nil {
				return err
			}
			return wf.run(ctx, w, waitRun{revision: revision, timeout: timeout, out: out, timeline: timeline, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()})
		},
	}
	wf.bind(cmd)
	repo.bind(cmd)
	out.bind(cmd, true)
	cmd.Flags().StringVar(&revision, "revision", "", "the revision every Kustomization must apply: tag@sha256:digest or sha256:digest (default: the one its source serves)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "give up after this long (exit 2)")
	cmd.Flags().StringVar(&timeline, "timeline", "", "also write the bootstrap's timeline to this file (HTML or JSON)")
	return cmd
}

// waitFlags are the flags wait, push --wait and promote --wait share: the
// cluster (--kubeconfig, --context, --namespace) and --stalled. --timeout
// is each command's own (push and promote already have one).
type waitFlags struct {
	cluster clusterFlags
	stalled time.Duration
}

func (wf *waitFlags) bind(cmd *cobra.Command) {
	wf.cluster.bind(cmd)
	cmd.Flags().DurationVar(&wf.stalled, "stalled", status.DefaultStalled, "give up on a layer failing with the same error for this long")
}

// check refuses the cluster flags without --wait (push and promote read
// no cluster otherwise).
func (wf *waitFlags) check(cmd *cobra.Command, wait bool) error {
	if wait {
		return nil
	}
	for _, name := range []string{"kubeconfig", "context", "namespace", "stalled"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s is for --wait", name)
		}
	}
	return nil
}

// waitRun is one wait: for what, and where its output goes.
type waitRun struct {
	// revision is what every Kustomization must apply ("": what its
	// source serves); with artifact (the oci:// URL it was pushed to),
	// only the Kustomizations reading that repository (status.WithArtifact).
	revision string
	artifact string
	// timeout is the deadline ctx holds, for the message when it passes.
	timeout  time.Duration
	out      statusFormat
	timeline string
	// stdout gets the final status; stderr the progress.
	stdout, stderr io.Writer
}

// run waits with w until every layer applied r.revision and is Ready
// (status.Watcher.Wait), printing progress and the final status; a layer
// that failed for good is a *FindingError (exit 1), the deadline an error
// (exit 2).
func (wf *waitFlags) run(ctx context.Context, w *status.Watcher, r waitRun) error {
	var (
		rec   *status.Recorder
		first *status.Snapshot
	)
	opts := []status.WaitOption{status.WithProgress(func(s *status.Snapshot) {
		if rec == nil {
			rec, first = status.NewRecorder(s.At), s
		}
		rec.Add(s)
		if s.Changed == nil {
			c := s.Counts()
			fmt.Fprintf(r.stderr, "%d layers: %d Ready, %d Reconciling, %d WaitingOn, %d Failed, %d SourceNotReady, %d Suspended\n",
				len(s.Layers), c[status.StateReady], c[status.StateReconciling], c[status.StateWaitingOn], c[status.StateFailed], c[status.StateSourceNotReady], c[status.StateSuspended])
			return
		}
		_ = s.WriteChanges(r.stderr)
	})}
	switch {
	case r.artifact != "":
		opts = append(opts, status.WithArtifact(r.artifact, r.revision))
	case r.revision != "":
		opts = append(opts, status.WithRevision(r.revision))
	}
	if wf.stalled > 0 {
		opts = append(opts, status.WithStalled(wf.stalled))
	}
	snap, werr := w.Wait(ctx, opts...)
	if r.timeline != "" && rec != nil {
		if err := saveTimeline(r.timeline, r.out, rec, first, r.stderr); err != nil {
			return errors.Join(werr, err)
		}
	}
	if snap != nil {
		var err error
		if r.out == "json" {
			err = writeJSON(r.stdout, statusJSON(snap))
		} else {
			err = snap.WriteText(r.stdout)
		}
		if err != nil {
			return err
		}
	}
	var failed *status.FailedError
	if errors.As(werr, &failed) {
		return &FindingError{Msg: failed.Error()}
	}
	if errors.Is(werr, context.DeadlineExceeded) {
		return fmt.Errorf("not every layer Ready within --timeout %s: %w", r.timeout, werr)
	}
	return werr
}
