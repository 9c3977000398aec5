package status

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// NotReadyError says why a cluster is not Ready on a revision: the layers
// that block the rest (Snapshot.Blocking), or, when none does, the layers
// that have not applied it yet.
type NotReadyError struct {
	// Revision is the revision asked for ("" for the one each source
	// serves).
	Revision string
	Layers   []Blocker
	Snapshot *Snapshot
}

func (e *NotReadyError) Error() string {
	rev := e.Revision
	if rev == "" {
		rev = "the revision its source serves"
	}
	if len(e.Layers) == 0 {
		return fmt.Sprintf("not Ready on %s: the cluster has no layer", rev)
	}
	parts := make([]string, 0, len(e.Layers))
	for _, l := range e.Layers {
		msg := l.Ref.String() + " " + string(l.State)
		switch {
		case l.Missing:
			msg = l.Ref.String() + " does not exist"
		case l.State == StateReady || l.State == StateSuspended:
			applied := l.Applied
			if applied == "" {
				applied = "no revision"
			}
			msg += ", applied " + applied
		}
		if l.Message != "" && !l.Missing {
			msg += ": " + l.Message
		}
		if l.Explanation != nil && l.Explanation.Rule != "" {
			msg += " [" + l.Explanation.Rule + "]"
		}
		parts = append(parts, msg)
	}
	return fmt.Sprintf("not Ready on %s: %s", rev, strings.Join(parts, "; "))
}

// Require reports whether every layer applied the revision opts name
// (WithRevision, WithArtifact; by default the one each source serves)
// and is Ready: nil if so, else a *NotReadyError naming the layers that
// block the rest or, when none blocks, those that have not applied it
// (still on an older revision, or reconciling it). Options other than
// those two are ignored.
func (s *Snapshot) Require(opts ...WaitOption) error {
	o, err := collect(opts)
	if err != nil {
		return fmt.Errorf("configuring the check: %w", err)
	}
	want := o.wants(s)
	if done(s, want) {
		return nil
	}
	e := &NotReadyError{Revision: o.revision, Snapshot: s, Layers: s.Blocking()}
	if len(e.Layers) == 0 {
		for i := range s.Layers {
			if !s.Layers[i].UpToDate(want(&s.Layers[i])) {
				e.Layers = append(e.Layers, Blocker{Layer: s.Layers[i]})
			}
		}
	}
	return e
}

// Require reads the cluster (Snapshot) and checks that every layer applied
// the revision and is Ready (Snapshot.Require). It does not wait for the
// revision: it is the question a promotion asks of the cluster promoted
// from, where Wait is the one a push asks of the cluster it deploys to.
// Only a reconcile in progress of the revision a layer has already applied
// (an interval, a dependency requeue, a requested reconcile: Flux says
// Ready Unknown until it ends) is waited for, up to the stalled limit
// (WithStalled) or ctx's end, as the answer is then not known; the
// snapshot read last answers.
func (w *Watcher) Require(ctx context.Context, opts ...WaitOption) (*Snapshot, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, fmt.Errorf("configuring the check: %w", err)
	}
	start := time.Now()
	for {
		snap, err := w.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		err = snap.Require(opts...)
		if err == nil || !snap.reapplying(o.wants(snap)) || time.Since(start) >= o.stalled {
			return snap, err
		}
		select {
		case <-ctx.Done():
			return snap, err
		case <-time.After(requirePoll):
		}
	}
}

// requirePoll is how often Require reads a cluster whose layers are
// reconciling a revision they applied.
const requirePoll = time.Second

// reapplying reports whether every layer not up to date on the revision
// want names is a Kustomization reconciling one it has already applied:
// a reconcile in progress, not a layer behind or failing.
func (s *Snapshot) reapplying(want func(*Layer) string) bool {
	some := false
	for i := range s.Layers {
		l := &s.Layers[i]
		if l.UpToDate(want(l)) {
			continue
		}
		if l.State != StateReconciling || l.Kind != KindKustomization || !l.hasApplied(want(l)) {
			return false
		}
		some = true
	}
	return some
}
