package status

import (
	"context"
	"fmt"
	"strings"
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

// Require reads the cluster once (Snapshot) and checks that every layer
// applied the revision and is Ready (Snapshot.Require). It does not wait:
// it is the question a promotion asks of the cluster promoted from, where
// Wait is the one a push asks of the cluster it deploys to.
func (w *Watcher) Require(ctx context.Context, opts ...WaitOption) (*Snapshot, error) {
	snap, err := w.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap, snap.Require(opts...)
}
