package status

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// WaitOption configures Wait. Invalid options make Wait fail.
type WaitOption func(*waitOptions) error

type waitOptions struct {
	revision string
	// repository limits revision to the Kustomizations whose
	// OCIRepository reads it (WithArtifact): host/path.
	repository string
	stalled    time.Duration
	progress   func(*Snapshot)
}

// DefaultStalled is how long the same error may last before Wait gives
// up on the layer: longer than Flux's 30s dependency requeue and a typical
// 1m retryInterval, so a race that heals on the next retry still passes.
const DefaultStalled = 2 * time.Minute

// WithRevision is the revision every Kustomization must have applied
// (tag@sha256:…, or the digest alone); default: the revision its source
// serves now.
func WithRevision(rev string) WaitOption {
	return func(o *waitOptions) error {
		if strings.TrimSpace(rev) == "" {
			return errdefs.InvalidOption("WithRevision: empty revision")
		}
		o.revision = rev
		return nil
	}
}

// WithArtifact is the artifact pushed to url (oci://host/repository, a
// tag or digest after it ignored) with digest (sha256:…): every
// Kustomization whose OCIRepository reads that repository must have
// applied it, and the others the revision their own source serves (a
// cluster bootstrapped from Git keeps its flux-system Kustomization on
// the GitRepository). When no Kustomization reads the repository (the
// cluster names the registry by another host, say), every Kustomization
// must have applied digest, as with WithRevision.
func WithArtifact(url, digest string) WaitOption {
	return func(o *waitOptions) error {
		repo := repositoryOf(url)
		var errs []error
		if repo == "" || !strings.Contains(repo, "/") {
			errs = append(errs, errdefs.InvalidOption("WithArtifact: artifact %q: want oci://host/repository", url))
		}
		if strings.TrimSpace(digest) == "" {
			errs = append(errs, errdefs.InvalidOption("WithArtifact: artifact %q: empty digest", url))
		}
		o.repository, o.revision = repo, digest
		return errors.Join(errs...)
	}
}

// repositoryOf is host/path of an oci:// URL, without its tag or digest.
func repositoryOf(url string) string {
	r := strings.TrimPrefix(url, "oci://")
	if i := strings.Index(r, "@"); i >= 0 {
		r = r[:i]
	}
	if i := strings.LastIndex(r, ":"); i > strings.LastIndex(r, "/") {
		r = r[:i]
	}
	return strings.TrimSuffix(r, "/")
}

// wants returns what each layer of s must have applied (see
// Layer.UpToDate).
func (o waitOptions) wants(s *Snapshot) func(*Layer) string {
	all := func(*Layer) string { return o.revision }
	if o.repository == "" {
		return all
	}
	reads := map[Ref]bool{}
	for _, src := range s.Sources {
		if src.Kind == KindOCIRepository && repositoryOf(src.URL) == o.repository {
			reads[src.Ref] = true
		}
	}
	some := false
	for _, l := range s.Layers {
		if l.Kind == KindKustomization && l.Source != nil && reads[*l.Source] {
			some = true
			break
		}
	}
	if !some {
		return all
	}
	return func(l *Layer) string {
		if l.Source != nil && reads[*l.Source] {
			return o.revision
		}
		return ""
	}
}

// done is Snapshot.Done with what each layer must have applied.
func done(s *Snapshot, want func(*Layer) string) bool {
	if len(s.Layers) == 0 {
		return false
	}
	for i := range s.Layers {
		if !s.Layers[i].UpToDate(want(&s.Layers[i])) {
			return false
		}
	}
	return true
}

// collect applies opts over the defaults.
func collect(opts []WaitOption) (waitOptions, error) {
	o := waitOptions{stalled: DefaultStalled}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			errs = append(errs, errdefs.InvalidOption("nil WaitOption"))
			continue
		}
		if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	return o, errors.Join(errs...)
}

// WithStalled sets how long the same failure may last before Wait gives
// up (default DefaultStalled).
func WithStalled(d time.Duration) WaitOption {
	return func(o *waitOptions) error {
		if d <= 0 {
			return errdefs.InvalidOption("WithStalled: stalled limit %s: must be positive", d)
		}
		o.stalled = d
		return nil
	}
}

// WithProgress calls f with every snapshot Wait sees.
func WithProgress(f func(*Snapshot)) WaitOption {
	return func(o *waitOptions) error {
		if f == nil {
			return errdefs.InvalidOption("WithProgress: nil progress function")
		}
		o.progress = f
		return nil
	}
}

// FailedError says why Wait gave up: layers that failed in a way that
// will not heal without a change (Terminal), that failed the same way for
// longer than the stalled limit, or that are suspended without the
// revision.
type FailedError struct {
	Layers   []Blocker
	Snapshot *Snapshot
}

func (e *FailedError) Error() string {
	var parts []string
	for _, l := range e.Layers {
		why := string(l.State)
		switch {
		case l.State == StateSuspended:
			why = "suspended"
		case l.Terminal:
			why = "failed (terminal)"
		case !l.FailingSince.IsZero():
			why = fmt.Sprintf("failing since %s", l.FailingSince.UTC().Format(time.RFC3339))
		}
		msg := l.Ref.String() + " " + why
		if l.Message != "" {
			msg += ": " + l.Message
		}
		if l.Explanation != nil && l.Explanation.Rule != "" {
			msg += " [" + l.Explanation.Rule + "]"
		}
		parts = append(parts, msg)
	}
	return "bootstrap failed: " + strings.Join(parts, "; ")
}

// Wait watches the cluster until every layer applied the revision and is
// Ready (it returns the last snapshot), or a layer fails for good
// (*FailedError), or ctx ends (its error, with the last snapshot's
// blocking layers).
func (w *Watcher) Wait(ctx context.Context, opts ...WaitOption) (*Snapshot, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, fmt.Errorf("configuring wait: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snaps, err := w.Watch(ctx)
	if err != nil {
		return nil, err
	}
	var last *Snapshot
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case snap, ok := <-snaps:
			if !ok {
				if err := w.Err(); err != nil {
					return last, err
				}
				return last, waitEnded(ctx, last)
			}
			last = snap
			if o.progress != nil {
				o.progress(snap)
			}
		case <-timer.C:
			// The oldest failure reached the stalled limit: decide on
			// the last snapshot again.
		case <-ctx.Done():
			return last, waitEnded(ctx, last)
		}
		if last == nil {
			continue
		}
		if done(last, o.wants(last)) {
			return last, nil
		}
		failed, next := stalled(last, o, w.opts.now())
		if len(failed) > 0 {
			return last, &FailedError{Layers: failed, Snapshot: last}
		}
		timer.Stop()
		if next > 0 {
			timer.Reset(next)
		}
	}
}

// stalled returns the layers Wait gives up on, or else how long until the
// oldest failure reaches the limit (0: none is failing).
func stalled(s *Snapshot, o waitOptions, now time.Time) ([]Blocker, time.Duration) {
	var out []Blocker
	var next time.Duration
	want := o.wants(s)
	for _, l := range s.Layers {
		switch {
		case l.State == StateSuspended && !l.UpToDate(want(&l)):
			out = append(out, Blocker{Layer: l})
		case l.State == StateFailed && l.Terminal:
			out = append(out, Blocker{Layer: l})
		case (l.State == StateFailed || l.State == StateSourceNotReady) && !l.FailingSince.IsZero():
			left := o.stalled - now.Sub(l.FailingSince)
			if left <= 0 {
				out = append(out, Blocker{Layer: l})
			} else if next == 0 || left < next {
				next = left
			}
		}
	}
	if len(out) > 0 {
		holds := map[Ref][]string{}
		for _, b := range s.Blocking() {
			holds[b.Ref] = b.Holds
		}
		for i := range out {
			out[i].Holds = holds[out[i].Ref]
		}
	}
	return out, next
}

// waitEnded is the error of a wait whose context ended.
func waitEnded(ctx context.Context, last *Snapshot) error {
	err := ctx.Err()
	if err == nil {
		err = errors.New("the watch ended")
	}
	if last == nil {
		return err
	}
	var names []string
	for _, b := range last.Blocking() {
		names = append(names, b.Ref.String()+" "+string(b.State))
	}
	if len(names) == 0 {
		for _, l := range last.Layers {
			if !l.UpToDate("") {
				names = append(names, l.Ref.String()+" "+string(l.State))
			}
		}
	}
	return fmt.Errorf("waiting for %s: %w", strings.Join(names, ", "), err)
}
