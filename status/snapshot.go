package status

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
	"strings"
	"time"
)

// Snapshot is the cluster's state at one moment.
type Snapshot struct {
	// At is when the snapshot was taken (the last event it holds).
	At time.Time `json:"at"`
	// Layers are the Kustomizations, HelmReleases, FluxInstances and
	// ResourceSets, along the graph: every layer after all it depends on
	// (ties by kind, namespace and name).
	Layers []Layer `json:"layers"`
	// Sources are the sources the layers read.
	Sources []Layer `json:"sources"`
	// Changed are the objects the last event changed (nil for a first
	// snapshot).
	Changed []Ref `json:"changed,omitempty"`
}

// Blocker is a layer that holds others back.
type Blocker struct {
	Layer
	// Holds are the layers waiting on it, directly or through others
	// (namespace/name).
	Holds []string `json:"holds,omitempty"`
	// Missing: the layer does not exist, but others depend on it, or
	// the plan (WithPlan) has it.
	Missing bool `json:"missing,omitempty"`
}

// Layer returns the layer kind/namespace/name, or nil.
func (s *Snapshot) Layer(ref Ref) *Layer {
	for i := range s.Layers {
		if s.Layers[i].Ref == ref {
			return &s.Layers[i]
		}
	}
	return nil
}

// Blocking returns the layers that block the rest: every Failed layer,
// every layer of the plan the cluster lacks (Missing), and
// at the end of each chain of waiting layers the one not Ready that is not
// itself waiting (Reconciling, Suspended, SourceNotReady, Failed, or
// missing), each with the layers it holds. Layers merely waiting are not
// among them.
func (s *Snapshot) Blocking() []Blocker {
	byKey := map[string]*Layer{}
	for i := range s.Layers {
		l := &s.Layers[i]
		if _, dup := byKey[kindKey(l.Kind, l.Key())]; !dup {
			byKey[kindKey(l.Kind, l.Key())] = l
		}
	}
	holds := map[string]map[string]bool{} // blocker kind key -> held keys
	missing := map[string]Ref{}
	var visit func(kind, key, holder string, seen map[string]bool)
	visit = func(kind, key, holder string, seen map[string]bool) {
		kk := kindKey(kind, key)
		if seen[kk] {
			return
		}
		seen[kk] = true
		l := byKey[kk]
		if l == nil {
			ns, name, _ := strings.Cut(key, "/")
			missing[kk] = Ref{Kind: kind, Namespace: ns, Name: name}
			add(holds, kk, holder)
			return
		}
		if l.State == StateWaitingOn {
			for _, d := range l.WaitingOn {
				visit(kind, d, holder, seen)
			}
			return
		}
		if l.State != StateReady {
			add(holds, kk, holder)
		}
	}
	for i := range s.Layers {
		l := &s.Layers[i]
		if l.State != StateWaitingOn {
			continue
		}
		seen := map[string]bool{kindKey(l.Kind, l.Key()): true}
		for _, d := range l.WaitingOn {
			visit(l.Kind, d, l.Key(), seen)
		}
	}
	var out []Blocker
	for i := range s.Layers {
		l := &s.Layers[i]
		kk := kindKey(l.Kind, l.Key())
		if h, ok := holds[kk]; ok || l.State == StateFailed || l.State == StateMissing {
			out = append(out, Blocker{Layer: *l, Holds: sortedKeys(h), Missing: l.State == StateMissing})
		}
	}
	for kk, ref := range missing {
		out = append(out, Blocker{Layer: Layer{Ref: ref, State: StateUnknown, Message: "does not exist"}, Holds: sortedKeys(holds[kk]), Missing: true})
	}
	slices.SortStableFunc(out, func(a, b Blocker) int {
		return cmp.Or(cmp.Compare(len(b.Holds), len(a.Holds)), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func kindKey(kind, key string) string { return kind + "/" + key }

func add(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// Done reports whether every layer applied want (see Layer.UpToDate) and
// is Ready; false when there is no layer.
func (s *Snapshot) Done(want string) bool {
	if len(s.Layers) == 0 {
		return false
	}
	for i := range s.Layers {
		if !s.Layers[i].UpToDate(want) {
			return false
		}
	}
	return true
}

// Counts is the number of layers in each state.
func (s *Snapshot) Counts() map[State]int {
	out := map[State]int{}
	for _, l := range s.Layers {
		out[l.State]++
	}
	return out
}

// build makes a snapshot of the objects: it settles the states that depend
// on other objects and orders the layers along the graph.
func build(at time.Time, layers, sources []Layer, e Explainer) *Snapshot {
	src := map[Ref]*Layer{}
	for i := range sources {
		src[sources[i].Ref] = &sources[i]
	}
	ready := map[string]bool{}
	exists := map[string]bool{}
	for _, l := range layers {
		exists[kindKey(l.Kind, l.Key())] = true
		if l.State == StateReady {
			ready[kindKey(l.Kind, l.Key())] = true
		}
	}
	for i := range layers {
		l := &layers[i]
		if l.Source != nil {
			if s := src[*l.Source]; s != nil {
				l.SourceRevision = s.SourceRevision
				if l.State == StateSourceNotReady && s.State == StateReady && s.SourceRevision != "" {
					l.State = StateFailed // the source is fine: the artifact is what fails
				}
			} else {
				l.SourceRevision = ""
			}
		} else if l.Kind != KindFluxInstance {
			l.SourceRevision = ""
		}
		if l.State == StateWaitingOn {
			l.WaitingOn = nil
			for _, d := range l.DependsOn {
				if !ready[kindKey(l.Kind, d)] {
					l.WaitingOn = append(l.WaitingOn, d)
				}
			}
			if len(l.WaitingOn) == 0 {
				l.WaitingOn = waitedFromMessage(l.Message)
			}
		}
		if l.State == StateFailed {
			switch {
			case l.Reason == "BuildFailed" && l.Attempted != "" && l.Attempted == l.SourceRevision:
				l.Terminal = true // the served revision does not build
			case l.Reason == "ArtifactFailed" && strings.Contains(l.Message, "kustomization path not found"):
				l.Terminal = true // nor has the path
			}
			l.Explanation = explain(e, l.Ref, l.Reason, l.Message)
		}
	}
	return &Snapshot{At: at, Layers: order(layers), Sources: order(sources)}
}

// waitedFromMessage reads "dependency 'ns/name' is not ready".
func waitedFromMessage(msg string) []string {
	_, rest, ok := strings.Cut(msg, "dependency '")
	if !ok {
		return nil
	}
	name, _, ok := strings.Cut(rest, "'")
	if !ok {
		return nil
	}
	return []string{name}
}

// order sorts layers so that each comes after what it depends on (Kahn's
// algorithm, ties by kind, namespace and name; a cycle's members last).
func order(layers []Layer) []Layer {
	slices.SortFunc(layers, func(a, b Layer) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	idx := map[string]int{}
	for i, l := range layers {
		idx[kindKey(l.Kind, l.Key())] = i
	}
	indeg := make([]int, len(layers))
	next := make([][]int, len(layers))
	for i, l := range layers {
		for _, d := range l.DependsOn {
			if j, ok := idx[kindKey(l.Kind, d)]; ok && j != i {
				indeg[i]++
				next[j] = append(next[j], i)
			}
		}
	}
	out := make([]Layer, 0, len(layers))
	done := make([]bool, len(layers))
	h := &intHeap{}
	for i := range layers {
		if indeg[i] == 0 {
			heap.Push(h, i)
		}
	}
	for h.Len() > 0 {
		i := heap.Pop(h).(int)
		done[i] = true
		out = append(out, layers[i])
		for _, j := range next[i] {
			if indeg[j]--; indeg[j] == 0 {
				heap.Push(h, j)
			}
		}
	}
	for i := range layers {
		if !done[i] {
			out = append(out, layers[i]) // a cycle
		}
	}
	return out
}

// intHeap is a min-heap of indices: the smallest layer ready first.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
