package status

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WaitOption configures Wait. Invalid options make Wait fail.
type WaitOption func(*waitOptions) error

type waitOptions struct {
	revision string
	stalled  time.Duration
	progress func(*Snapshot)
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
			return errors.New("empty revision")
		}
		o.revision = rev
		return nil
	}
}

// WithStalled sets how long the same failure may last before Wait gives
// up (default DefaultStalled).
func WithStalled(d time.Duration) WaitOption {
	return func(o *waitOptions) error {
		if d <= 0 {
			return fmt.Errorf("stalled limit %s: must be positive", d)
		}
		o.stalled = d
		return nil
	}
}

// WithProgress calls f with every snapshot Wait sees.
func WithProgress(f func(*Snapshot)) WaitOption {
	return func(o *waitOptions) error {
		if f == nil {
			return errors.New("nil progress function")
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
	o := waitOptions{stalled: DefaultStalled}
	var errs []error
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("configuring wait: %w", errors.Join(errs...))
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
		if last.Done(o.revision) {
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
	for _, l := range s.Layers {
		switch {
		case l.State == StateSuspended && !l.UpToDate(o.revision):
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
