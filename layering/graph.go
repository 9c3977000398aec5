package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// GraphFormat is a format Plan.Graph draws in.
type GraphFormat string

// Graph formats.
const (
	GraphMermaid GraphFormat = "mermaid" // a flowchart that GitHub renders
	GraphDot     GraphFormat = "dot"     // Graphviz
	GraphTree    GraphFormat = "tree"    // the bootstrap order, from the layers that depend on none down
	GraphJSON    GraphFormat = "json"    // GraphDoc, for programs
)

// GraphFormats lists the formats Graph takes.
func GraphFormats() []GraphFormat { return []GraphFormat{GraphMermaid, GraphDot, GraphTree, GraphJSON} }

// ParseGraphFormat reads a format's name, as --format takes it.
func ParseGraphFormat(s string) (GraphFormat, error) {
	for _, f := range GraphFormats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", errdefs.Kind(ErrInvalidOption, "unknown graph format %q: want one of %s", s, formatList())
}

func formatList() string {
	var s []string
	for _, f := range GraphFormats() {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// DefaultRequeueDependency is the --requeue-dependency of stock Flux's
// kustomize-controller (and helm-controller): how long a Kustomization
// whose dependsOn is not Ready waits before it looks again. The controller
// does not watch dependencies, so each dependsOn edge a bootstrap goes
// through costs up to this much (FluxPatch shortens it, where Flux may be
// changed).
const DefaultRequeueDependency = 30 * time.Second

// CriticalPath is the longest chain of dependencies of a Plan: the layers
// that must become Ready one after the other, first to last.
type CriticalPath struct {
	Layers []string
	// Timeout is the sum of the layers' timeouts: how long a first
	// reconcile may take in the worst case before the last layer starts
	// failing, retries aside.
	Timeout time.Duration
	// Polling is how long stock Flux may spend polling dependencies along
	// the path: each of its len(Layers)-1 dependsOn edges costs up to
	// DefaultRequeueDependency.
	Polling time.Duration
	// Woken is true when the Plan wakes dependents (Plan.Wake, or a
	// repository whose tree holds the wake Kustomization `fluxpack wake`
	// writes): each edge then costs one event through
	// notification-controller, and Polling only without it.
	Woken bool
	// Repository is true for the Plan of a repository (package fluxrepo:
	// Kustomizations applied by Kustomizations), whose dependents
	// `fluxpack wake` wakes; false for a stack.
	Repository bool
}

// WakeSaving is what waking dependents would save a bootstrap along the
// path in stock Flux: up to DefaultRequeueDependency per dependsOn edge
// (Polling), each edge then costing one event through
// notification-controller instead; 0 when the Plan wakes them already.
func (c CriticalPath) WakeSaving() time.Duration {
	if c.Woken {
		return 0
	}
	return c.Polling
}

// WakeHint says, for a repository whose dependents are not woken, what
// `fluxpack wake` would save along the path; "" otherwise (a stack, a
// Plan that wakes them, a path without edges).
func (c CriticalPath) WakeHint() string {
	if !c.Repository || c.WakeSaving() == 0 {
		return ""
	}
	return fmt.Sprintf("`fluxpack wake` would save up to %s of it: each of the %d edges then costs one event through notification-controller",
		c.WakeSaving(), c.Edges())
}

func (c CriticalPath) String() string {
	return fmt.Sprintf("critical path: %s (%d layers, worst case %s of timeouts)", strings.Join(c.Layers, " -> "), len(c.Layers), c.Timeout)
}

// Edges is the number of dependsOn edges along the path.
func (c CriticalPath) Edges() int { return max(len(c.Layers)-1, 0) }

// Latency says what the path's dependsOn edges cost a bootstrap in stock
// Flux: up to DefaultRequeueDependency each, or one event each when the
// Plan wakes dependents.
func (c CriticalPath) Latency() string {
	n := c.Edges()
	if n == 0 {
		return "no dependsOn edge on the critical path: no dependency polling"
	}
	if c.Woken {
		return fmt.Sprintf("dependents are woken by events (wake): each of the %d dependsOn edges costs one event through notification-controller, not up to %s of dependency polling (--requeue-dependency=%s, %s in all, only without notification-controller or the wake Secret)",
			n, DefaultRequeueDependency, DefaultRequeueDependency, c.Polling)
	}
	s := fmt.Sprintf("up to %d × %s = %s of dependency polling in stock Flux (--requeue-dependency=%s): kustomize-controller does not watch dependencies, it looks at a layer whose dependsOn is not Ready again only after that long",
		n, DefaultRequeueDependency, c.Polling, DefaultRequeueDependency)
	if h := c.WakeHint(); h != "" {
		s += "; " + h
	}
	return s
}

// CriticalPath returns the Plan's longest dependency chain; ties go to the
// layer declared first. In a Plan with a dependency cycle (which Build
// refuses, and lint reports), the chain follows no edge that closes a
// cycle.
func (p *Plan) CriticalPath() CriticalPath {
	idx := p.index()
	depth := make([]int, len(p.Layers))
	next := make([]int, len(p.Layers))
	visiting := make([]bool, len(p.Layers))
	var visit func(i int) int
	visit = func(i int) int {
		if depth[i] > 0 {
			return depth[i]
		}
		depth[i], next[i], visiting[i] = 1, -1, true
		for _, d := range p.Layers[i].DependsOn {
			j, ok := idx[d]
			if !ok || visiting[j] {
				continue // an unknown layer, or a cycle: graph findings of lint
			}
			if v := visit(j) + 1; v > depth[i] {
				depth[i], next[i] = v, j
			}
		}
		visiting[i] = false
		return depth[i]
	}
	best := -1
	for i := range p.Layers {
		// visit first: a layer that nothing depends on is reached only here.
		if d := visit(i); best < 0 || d > depth[best] {
			best = i
		}
	}
	var c CriticalPath
	for i := best; i >= 0; i = next[i] {
		l := p.Layers[i]
		c.Layers = append(c.Layers, l.Name)
		c.Timeout += l.Kustomization.GetTimeout() // Flux's default when unset
	}
	slices.Reverse(c.Layers)
	c.Polling = time.Duration(c.Edges()) * DefaultRequeueDependency
	c.Woken = p.Wake != nil
	for _, l := range p.Layers {
		c.Woken = c.Woken || IsWakeKustomization(l.Kustomization)
		c.Repository = c.Repository || l.Parent != ""
	}
	return c
}

func (p *Plan) index() map[string]int {
	idx := make(map[string]int, len(p.Layers))
	for i, l := range p.Layers {
		idx[l.Name] = i
	}
	return idx
}

// describe says what a layer is and how it becomes Ready.
func (l *Layer) describe() string {
	kind := "Kustomization"
	if l.HelmRelease != nil {
		kind = "HelmRelease"
	}
	spec := &l.Kustomization.Spec
	parts := []string{kind}
	switch {
	case spec.Wait:
		parts = append(parts, "wait")
	case len(spec.HealthChecks) > 0:
		parts = append(parts, fmt.Sprintf("healthChecks (%d)", len(spec.HealthChecks)))
	default:
		parts = append(parts, "no wait")
	}
	if l.Operator {
		parts = append(parts, "operator")
	}
	if !spec.Prune {
		parts = append(parts, "prune: false")
	}
	return strings.Join(parts, ", ")
}

// GraphDoc is what GraphJSON writes: the layers in declaration order, each
// with its kind, how it becomes Ready, what it depends on (layers of the
// Plan only) and the layer that applies it, and the critical path.
type GraphDoc struct {
	Name         string           `json:"name"`
	Layers       []GraphLayer     `json:"layers"`
	CriticalPath GraphCriticalDoc `json:"criticalPath"`
}

// GraphLayer is one layer of a GraphDoc.
type GraphLayer struct {
	Name string `json:"name"`
	// Kind is Kustomization or HelmRelease.
	Kind string `json:"kind"`
	// Ready says how it becomes Ready: wait, healthChecks or none.
	Ready     string   `json:"ready"`
	Operator  bool     `json:"operator,omitempty"`
	Prune     bool     `json:"prune"`
	DependsOn []string `json:"dependsOn,omitempty"`
	AppliedBy string   `json:"appliedBy,omitempty"`
}

// GraphCriticalDoc is CriticalPath in a GraphDoc, durations as Go writes
// them (1m30s).
type GraphCriticalDoc struct {
	Layers  []string `json:"layers"`
	Timeout string   `json:"timeout"`
	Polling string   `json:"polling"`
	Woken   bool     `json:"woken"`
	Latency string   `json:"latency"`
}

// graphDoc is the Plan as GraphJSON writes it.
func (p *Plan) graphDoc(crit CriticalPath) GraphDoc {
	idx := p.index()
	doc := GraphDoc{Name: p.Name, Layers: []GraphLayer{}, CriticalPath: GraphCriticalDoc{
		Layers: append([]string{}, crit.Layers...), Timeout: crit.Timeout.String(), Polling: crit.Polling.String(), Woken: crit.Woken, Latency: crit.Latency(),
	}}
	for _, l := range p.Layers {
		g := GraphLayer{Name: l.Name, Kind: "Kustomization", Ready: "none", Operator: l.Operator}
		if l.HelmRelease != nil {
			g.Kind = "HelmRelease"
		}
		if k := l.Kustomization; k != nil {
			switch {
			case k.Spec.Wait:
				g.Ready = "wait"
			case len(k.Spec.HealthChecks) > 0:
				g.Ready = "healthChecks"
			}
			g.Prune = k.Spec.Prune
		}
		for _, d := range l.DependsOn {
			if _, ok := idx[d]; ok {
				g.DependsOn = append(g.DependsOn, d)
			}
		}
		if _, ok := idx[l.Parent]; ok {
			g.AppliedBy = l.Parent
		}
		doc.Layers = append(doc.Layers, g)
	}
	return doc
}

// Graph draws the Plan's DAG in format (GraphMermaid, GraphDot, GraphTree
// or GraphJSON): each layer with its kind and how it becomes Ready, edges
// from a layer to those that depend on it, and the critical path
// highlighted.
func (p *Plan) Graph(format GraphFormat) ([]byte, error) {
	var b bytes.Buffer
	crit := p.CriticalPath()
	onPath := map[string]int{}
	for i, n := range crit.Layers {
		onPath[n] = i + 1
	}
	critEdge := func(dep, layer string) bool {
		return onPath[dep] > 0 && onPath[layer] == onPath[dep]+1
	}
	switch format {
	case GraphMermaid:
		idx := p.index()
		fmt.Fprintf(&b, "flowchart LR\n")
		for i, l := range p.Layers {
			fmt.Fprintf(&b, "  n%d[\"%s<br/>%s\"]\n", i, l.Name, l.describe())
		}
		var critLinks []string
		link := 0
		for i, l := range p.Layers {
			for _, d := range l.DependsOn {
				if _, ok := idx[d]; !ok {
					continue
				}
				fmt.Fprintf(&b, "  n%d --> n%d\n", idx[d], i)
				if critEdge(d, l.Name) {
					critLinks = append(critLinks, fmt.Sprint(link))
				}
				link++
			}
		}
		for i, l := range p.Layers {
			if j, ok := idx[l.Parent]; ok {
				fmt.Fprintf(&b, "  n%d -.-> n%d\n", j, i) // applies
				link++
			}
		}
		var critNodes []string
		for _, n := range crit.Layers {
			critNodes = append(critNodes, fmt.Sprintf("n%d", idx[n]))
		}
		fmt.Fprintf(&b, "  classDef critical stroke:#d73a49,stroke-width:3px\n")
		fmt.Fprintf(&b, "  class %s critical\n", strings.Join(critNodes, ","))
		if len(critLinks) > 0 {
			fmt.Fprintf(&b, "  linkStyle %s stroke:#d73a49,stroke-width:3px\n", strings.Join(critLinks, ","))
		}
		fmt.Fprintf(&b, "%%%% %s\n%%%% %s\n", crit, crit.Latency())
	case GraphDot:
		fmt.Fprintf(&b, "digraph %q {\n  rankdir=LR;\n  node [shape=box];\n", p.Name)
		for _, l := range p.Layers {
			extra := ""
			if onPath[l.Name] > 0 {
				extra = ", color=red, penwidth=2"
			}
			fmt.Fprintf(&b, "  %q [label=%q%s];\n", l.Name, l.Name+"\n"+l.describe(), extra)
		}
		idx := p.index()
		for _, l := range p.Layers {
			if _, ok := idx[l.Parent]; ok {
				fmt.Fprintf(&b, "  %q -> %q [style=dashed];\n", l.Parent, l.Name)
			}
			for _, d := range l.DependsOn {
				if _, ok := idx[d]; !ok {
					continue
				}
				extra := ""
				if critEdge(d, l.Name) {
					extra = " [color=red, penwidth=2]"
				}
				fmt.Fprintf(&b, "  %q -> %q%s;\n", d, l.Name, extra)
			}
		}
		fmt.Fprintf(&b, "  label=%q;\n}\n", crit.String()+"\n"+crit.Latency())
	case GraphTree:
		p.tree(&b)
		fmt.Fprintf(&b, "\n%s\n%s\n", crit, crit.Latency())
	case GraphJSON:
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p.graphDoc(crit)); err != nil {
			return nil, err
		}
	default:
		return nil, errdefs.Kind(ErrInvalidOption, "unknown graph format %q: want one of %s", format, formatList())
	}
	return b.Bytes(), nil
}

// tree prints the bootstrap order as a reader follows it: each layer that
// depends on none at the top, and below each layer the layers that depend
// on it, in the Plan's order, a layer's HelmRelease first. A layer is drawn
// in full under the dependency it waits for last (the one with the longest
// chain of dependencies above it), so its depth is its step in the
// bootstrap; under its other dependencies it is named, with where it is
// drawn. A dependency the platform does not have is a root of its own,
// marked; layers of a dependency cycle no root reaches come last, marked
// too.
func (p *Plan) tree(b *bytes.Buffer) {
	idx := p.index()
	var missing []string // dependencies the platform does not have, first seen first
	dependents := map[string][]int{}
	for i, l := range p.Layers {
		for _, d := range l.DependsOn {
			if _, known := idx[d]; !known && dependents[d] == nil {
				missing = append(missing, d)
			}
			dependents[d] = append(dependents[d], i)
		}
	}
	// depth is the longest chain of dependencies above a layer: 0 for one
	// that depends on none, or on none the platform has.
	depths := map[string]int{}
	visiting := map[string]bool{}
	var depth func(name string) int
	depth = func(name string) int {
		j, known := idx[name]
		if !known || visiting[name] {
			return 0
		}
		if d, ok := depths[name]; ok {
			return d
		}
		visiting[name] = true
		d := 0
		for _, dep := range p.Layers[j].DependsOn {
			if _, known := idx[dep]; known {
				d = max(d, depth(dep)+1)
			}
		}
		visiting[name] = false
		depths[name] = d
		return d
	}
	// under is the dependency a layer is drawn under: the deepest, the
	// later in the Plan of two as deep; one the platform has before one
	// it does not.
	under := func(l *Layer) string {
		best, bestDepth, bestIdx := "", -1, -2
		for _, d := range l.DependsOn {
			i, known := idx[d]
			if !known {
				i = -1
			}
			if dd := depth(d); dd > bestDepth || dd == bestDepth && i > bestIdx {
				best, bestDepth, bestIdx = d, dd, i
			}
		}
		return best
	}
	printed := map[string]bool{}
	var walk func(name string, hr *helmv2.HelmRelease, prefix string)
	walk = func(name string, hr *helmv2.HelmRelease, prefix string) {
		below := dependents[name]
		n := len(below)
		if hr != nil {
			n++
			branch := "├── "
			if n == 1 {
				branch = "└── "
			}
			fmt.Fprintf(b, "%s%sHelmRelease/%s/%s\n", prefix, branch, hr.Namespace, hr.Name)
		}
		for i, j := range below {
			c := &p.Layers[j]
			branch, indent := "├── ", "│   "
			if i == len(below)-1 {
				branch, indent = "└── ", "    "
			}
			switch u := under(c); {
			case u != name:
				fmt.Fprintf(b, "%s%s%s (drawn under %s)\n", prefix, branch, p.KustomizationRef(c.Name), u)
			case printed[c.Name]: // a dependency cycle
				fmt.Fprintf(b, "%s%s%s (see above)\n", prefix, branch, p.KustomizationRef(c.Name))
			default:
				printed[c.Name] = true
				fmt.Fprintf(b, "%s%s%s\n", prefix, branch, p.KustomizationRef(c.Name))
				walk(c.Name, c.HelmRelease, prefix+indent)
			}
		}
	}
	first := true
	root := func(name, note string, hr *helmv2.HelmRelease) {
		if !first {
			b.WriteString("\n")
		}
		first = false
		printed[name] = true
		fmt.Fprintf(b, "%s%s\n", p.KustomizationRef(name), note)
		walk(name, hr, "")
	}
	for i := range p.Layers {
		if l := &p.Layers[i]; len(l.DependsOn) == 0 {
			root(l.Name, "", l.HelmRelease)
		}
	}
	for _, d := range missing {
		root(d, " (not in the platform)", nil)
	}
	// What no root reaches waits, through the layers it is drawn under, on
	// a dependency cycle: draw the cycle from the first of its layers met.
	for i := range p.Layers {
		if printed[p.Layers[i].Name] {
			continue
		}
		name, seen := p.Layers[i].Name, map[string]bool{}
		for !seen[name] {
			seen[name] = true
			u := under(&p.Layers[idx[name]])
			if _, known := idx[u]; !known {
				break // only where two layers share a name
			}
			name = u
		}
		root(name, " (in a dependency cycle)", p.Layers[idx[name]].HelmRelease)
	}
}
