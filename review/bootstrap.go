package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fluxpack/fluxpack/layering"
)

// Edge is one dependsOn: From waits for To.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (e Edge) String() string { return e.From + " -> " + e.To }

// Path is a critical path: the longest dependsOn chain of a tree.
type Path struct {
	Layers []string `json:"layers"`
	// Edges is the number of dependsOn edges on it; Polling what they cost
	// a bootstrap in stock Flux (layering.DefaultRequeueDependency each)
	// unless dependents are woken by events (Woken).
	Edges   int           `json:"edges"`
	Polling time.Duration `json:"polling"`
	Woken   bool          `json:"woken,omitempty"`
	// Timeout is the sum of the timeouts along the path: the worst case
	// before the last layer gives up.
	Timeout time.Duration `json:"timeout"`
}

// Bootstrap is what a change does to the order Flux applies a tree in.
type Bootstrap struct {
	LayersAdded   []string `json:"layersAdded,omitempty"`
	LayersRemoved []string `json:"layersRemoved,omitempty"`
	EdgesAdded    []Edge   `json:"edgesAdded,omitempty"`
	EdgesRemoved  []Edge   `json:"edgesRemoved,omitempty"`
	// Before and After are the critical paths of both sides; nil for a
	// side without the tree.
	Before *Path `json:"before,omitempty"`
	After  *Path `json:"after,omitempty"`
}

// Changed reports whether the order changes.
func (b Bootstrap) Changed() bool {
	return len(b.LayersAdded)+len(b.LayersRemoved)+len(b.EdgesAdded)+len(b.EdgesRemoved) > 0
}

// Summary says in one line what the change does to a new cluster's
// bootstrap: "+1 dependsOn edge on the critical path: up to +30s of
// dependency polling in stock Flux".
func (b Bootstrap) Summary() string {
	if b.Before == nil || b.After == nil {
		return ""
	}
	d := b.After.Edges - b.Before.Edges
	switch {
	case d == 0 && slices.Equal(b.Before.Layers, b.After.Layers):
		return fmt.Sprintf("critical path unchanged: %d dependsOn edges", b.After.Edges)
	case d == 0:
		return fmt.Sprintf("critical path now %s, still %d dependsOn edges", joinPath(b.After.Layers), b.After.Edges)
	}
	poll := b.After.Polling - b.Before.Polling
	s := fmt.Sprintf("%+d dependsOn edge", d)
	if d != 1 && d != -1 {
		s += "s"
	}
	s += " on the critical path"
	if b.After.Woken {
		return s + " (dependents are woken by events: one event each)"
	}
	sign := "+"
	if poll < 0 {
		sign = "-"
		poll = -poll
	}
	return fmt.Sprintf("%s: up to %s%s of dependency polling in stock Flux (%s)", s, sign, poll, joinPath(b.After.Layers))
}

func joinPath(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += " -> "
		}
		s += x
	}
	return s
}

// planView is a side's plan, nil when the side has no tree.
type planView struct{ p *layering.Plan }

func (v *planView) edges() map[Edge]bool {
	out := map[Edge]bool{}
	if v == nil {
		return out
	}
	for _, l := range v.p.Layers {
		for _, d := range l.DependsOn {
			out[Edge{From: l.Name, To: d}] = true
		}
	}
	return out
}

func (v *planView) layers() map[string]bool {
	out := map[string]bool{}
	if v == nil {
		return out
	}
	for _, l := range v.p.Layers {
		out[l.Name] = true
	}
	return out
}

func (v *planView) path() *Path {
	if v == nil {
		return nil
	}
	c := v.p.CriticalPath()
	return &Path{Layers: c.Layers, Edges: c.Edges(), Polling: c.Polling, Woken: c.Woken, Timeout: c.Timeout}
}

// DiffBootstrap compares the layers, dependsOn edges and critical paths
// of two plans (nil for a side without the tree).
func DiffBootstrap(base, head *layering.Plan) Bootstrap {
	var bv, hv *planView
	if base != nil {
		bv = &planView{base}
	}
	if head != nil {
		hv = &planView{head}
	}
	return diffBootstrap(bv, hv)
}

func diffBootstrap(base, head *planView) Bootstrap {
	var b Bootstrap
	b.LayersAdded, b.LayersRemoved = setChanges(base.layers(), head.layers(), strings.Compare)
	b.EdgesAdded, b.EdgesRemoved = setChanges(base.edges(), head.edges(), func(x, y Edge) int {
		return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
	})
	b.Before, b.After = base.path(), head.path()
	return b
}

// setChanges lists, sorted, what head has that base lacks and what base
// has that head lacks.
func setChanges[T comparable](base, head map[T]bool, compare func(a, b T) int) (added, removed []T) {
	for x := range head {
		if !base[x] {
			added = append(added, x)
		}
	}
	for x := range base {
		if !head[x] {
			removed = append(removed, x)
		}
	}
	slices.SortFunc(added, compare)
	slices.SortFunc(removed, compare)
	return added, removed
}
