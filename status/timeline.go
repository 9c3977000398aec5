package status

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// Phase is what a layer was doing during a Span.
type Phase string

// Phases of a timeline.
const (
	PhaseWaiting        Phase = "waiting"         // on dependencies, its source, or a controller
	PhaseApplying       Phase = "applying"        // Reconciling, before health checks
	PhaseHealthChecking Phase = "health-checking" // Reconciling, running health checks
	PhaseFailed         Phase = "failed"
	PhaseSuspended      Phase = "suspended"
)

// Span is one stretch of a layer's time, in seconds since Timeline.Start.
type Span struct {
	Phase Phase   `json:"phase"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// TimelineLayer is one layer's spans until it was first Ready.
type TimelineLayer struct {
	Ref
	// DependsOn are its dependencies; a layer without any hangs off
	// AppliedBy.
	DependsOn []string `json:"dependsOn,omitempty"`
	AppliedBy string   `json:"appliedBy,omitempty"`
	Spans     []Span   `json:"spans"`
	// Ready is when it was first seen Ready with its source's revision
	// (seconds since Timeline.Start), or -1.
	Ready float64 `json:"ready"`
	// Lost is the part of its waiting after every dependency was Ready:
	// time lost to dependency polling, what a wake-up saves.
	Lost *Span `json:"lost,omitempty"`
	// Critical: the layer is on the critical path.
	Critical bool `json:"critical,omitempty"`
}

// Timeline is a bootstrap as a Gantt: every layer's spans, the critical
// path, and the time lost to dependency polling.
type Timeline struct {
	Start time.Time `json:"start"`
	// Total is when the last layer was first Ready (seconds since Start),
	// or the end of the recording when some never was.
	Total  float64         `json:"total"`
	Layers []TimelineLayer `json:"layers"`
	// CriticalPath runs from the first layer to the one Ready last,
	// following at each step the dependency (or the applier, for a layer
	// without dependsOn) Ready last.
	CriticalPath []string `json:"criticalPath"`
	// LostOnPath is the time lost to dependency polling on the critical
	// path; LostAll over all layers.
	LostOnPath float64 `json:"lostOnPath"`
	LostAll    float64 `json:"lostAll"`
	// Complete: every layer was Ready at the end.
	Complete bool `json:"complete"`
}

// Recorder builds a Timeline from the snapshots of a watch. It is safe
// for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	start  time.Time
	last   time.Time
	tracks map[Ref]*track
	done   bool
}

type track struct {
	layer       Layer
	spans       []Span
	phase       Phase
	since       float64
	ready       float64
	depsReadyAt float64 // when every dependency was first seen Ready, -1 before
}

// NewRecorder starts a timeline at start (the moment the bootstrap
// began, say the push, or the first snapshot's time).
func NewRecorder(start time.Time) *Recorder {
	return &Recorder{start: start, tracks: map[Ref]*track{}}
}

// Add records a snapshot.
func (r *Recorder) Add(s *Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.seconds(s.At)
	r.last = s.At
	ready := map[string]float64{}
	for _, t := range r.tracks {
		if t.ready >= 0 {
			ready[kindKey(t.layer.Kind, t.layer.Key())] = t.ready
		}
	}
	for _, l := range s.Layers {
		t := r.tracks[l.Ref]
		if t == nil {
			t = &track{phase: "", ready: -1, depsReadyAt: -1}
			r.tracks[l.Ref] = t
		}
		t.layer = l
		if t.ready >= 0 {
			continue
		}
		if l.UpToDate("") {
			t.close(at)
			t.ready = at
			ready[kindKey(l.Kind, l.Key())] = at
			continue
		}
		if t.depsReadyAt < 0 && len(l.DependsOn) > 0 {
			all := true
			for _, d := range l.DependsOn {
				if _, ok := ready[kindKey(l.Kind, d)]; !ok {
					all = false
					break
				}
			}
			if all {
				t.depsReadyAt = at
			}
		}
		p := phaseOf(l)
		if p != t.phase {
			t.close(at)
			t.phase, t.since = p, at
		}
	}
}

func (r *Recorder) seconds(t time.Time) float64 {
	return math.Max(0, t.Sub(r.start).Seconds())
}

func (t *track) close(at float64) {
	if t.phase != "" && at > t.since {
		if n := len(t.spans); n > 0 && t.spans[n-1].Phase == t.phase && t.spans[n-1].End == t.since {
			t.spans[n-1].End = at
		} else {
			t.spans = append(t.spans, Span{Phase: t.phase, Start: t.since, End: at})
		}
	}
	t.phase = ""
}

func phaseOf(l Layer) Phase {
	switch l.State {
	case StateReconciling:
		if l.Step == StepHealthChecking {
			return PhaseHealthChecking
		}
		return PhaseApplying
	case StateFailed:
		return PhaseFailed
	case StateSuspended:
		return PhaseSuspended
	default:
		return PhaseWaiting
	}
}

// Reconstruct draws the timeline of a bootstrap that was not recorded, from
// one snapshot: each Ready layer waited from its creation until its last
// successful reconcile began (its Ready condition's lastTransitionTime less
// Layer.ReconcileDuration), then applied (applying and health-checking are
// not told apart); a layer not Ready is drawn in its state until s.At. The
// timestamps are whole seconds, and a layer reconciled again since it was
// first Ready (each reconcile turns Ready to Unknown and back) is drawn at
// its last reconcile: a sketch of a fresh bootstrap, where a recording
// (Recorder) is exact. The timeline starts at the first layer's
// creation.
func Reconstruct(s *Snapshot) *Timeline {
	start := s.At
	for _, l := range s.Layers {
		if !l.Created.IsZero() && l.Created.Before(start) {
			start = l.Created
		}
	}
	r := NewRecorder(start)
	r.last = s.At
	ready := map[string]float64{}
	for _, l := range s.Layers { // along the graph: dependencies first
		t := &track{layer: l, ready: -1, depsReadyAt: -1}
		r.tracks[l.Ref] = t
		created := r.seconds(l.Created)
		if l.UpToDate("") && !l.Since.IsZero() {
			t.ready = r.seconds(l.Since)
			began := math.Max(created, t.ready-l.ReconcileDuration.Seconds())
			if began > created {
				t.spans = append(t.spans, Span{Phase: PhaseWaiting, Start: created, End: began})
			}
			t.spans = append(t.spans, Span{Phase: PhaseApplying, Start: began, End: t.ready})
			ready[kindKey(l.Kind, l.Key())] = t.ready
		} else {
			t.phase, t.since = phaseOf(l), created
		}
		if len(l.DependsOn) > 0 {
			at := -1.0
			for _, d := range l.DependsOn {
				dr, ok := ready[kindKey(l.Kind, d)]
				if !ok {
					at = -1
					break
				}
				at = math.Max(at, dr)
			}
			if at >= 0 {
				at = math.Max(at, created)
			}
			t.depsReadyAt = at
		}
	}
	return r.Timeline()
}

// Timeline returns what was recorded until now (open spans end at the last
// snapshot).
func (r *Recorder) Timeline() *Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.seconds(r.last)
	tl := &Timeline{Start: r.start, Complete: len(r.tracks) > 0}
	byKey := map[string]*TimelineLayer{}
	for _, t := range r.tracks {
		tlay := TimelineLayer{Ref: t.layer.Ref, DependsOn: t.layer.DependsOn, AppliedBy: t.layer.AppliedBy, Ready: t.ready}
		tlay.Spans = slices.Clone(t.spans)
		if t.ready < 0 {
			tl.Complete = false
			if t.phase != "" && end > t.since {
				tlay.Spans = append(tlay.Spans, Span{Phase: t.phase, Start: t.since, End: end})
			}
		}
		if t.depsReadyAt >= 0 {
			tlay.Lost = lostAfter(tlay.Spans, t.depsReadyAt)
		}
		tl.Layers = append(tl.Layers, tlay)
	}
	slices.SortFunc(tl.Layers, func(a, b TimelineLayer) int {
		ar, br := a.Ready, b.Ready
		if ar < 0 {
			ar = math.Inf(1)
		}
		if br < 0 {
			br = math.Inf(1)
		}
		return cmp.Or(cmp.Compare(ar, br), cmp.Compare(first(a.Spans), first(b.Spans)), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var last *TimelineLayer
	for i := range tl.Layers {
		l := &tl.Layers[i]
		byKey[kindKey(l.Kind, l.Key())] = l
		if l.Lost != nil {
			tl.LostAll += l.Lost.End - l.Lost.Start
		}
		if l.Ready >= 0 && (last == nil || l.Ready >= last.Ready) {
			last = l
		}
	}
	if tl.Complete && last != nil {
		tl.Total = last.Ready
	} else {
		tl.Total = end
	}
	for l := last; l != nil; {
		l.Critical = true
		tl.CriticalPath = append([]string{l.Key()}, tl.CriticalPath...)
		if l.Lost != nil {
			tl.LostOnPath += l.Lost.End - l.Lost.Start
		}
		deps := l.DependsOn
		kind := l.Kind
		if len(deps) == 0 && l.AppliedBy != "" {
			deps, kind = []string{l.AppliedBy}, KindKustomization
		}
		var next *TimelineLayer
		for _, d := range deps {
			if dl := byKey[kindKey(kind, d)]; dl != nil && !dl.Critical && dl.Ready >= 0 && (next == nil || dl.Ready > next.Ready) {
				next = dl
			}
		}
		l = next
	}
	return tl
}

func first(spans []Span) float64 {
	if len(spans) == 0 {
		return math.Inf(1)
	}
	return spans[0].Start
}

// lostAfter is the waiting after at: from at until the waiting span that
// holds it ends.
func lostAfter(spans []Span, at float64) *Span {
	for _, s := range spans {
		if s.Phase == PhaseWaiting && s.Start <= at && at < s.End {
			return &Span{Phase: PhaseWaiting, Start: at, End: s.End}
		}
	}
	return nil
}
