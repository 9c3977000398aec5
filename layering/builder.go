package layering

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/suggest"
)

// Builder collects a stack's layers. Its methods chain and never fail: bad
// input is recorded and Build returns every problem at once.
type Builder struct {
	stack stack
	steps []*step
	errs  []error
}

// New starts a stack called name (the name of its OCIRepository). Give it a
// source with FromOCI, FromOCIRepository or FromSource.
func New(name string, opts ...StackOption) *Builder {
	b := &Builder{stack: stack{
		name:          name,
		namespace:     DefaultNamespace,
		interval:      DefaultInterval,
		retryInterval: DefaultRetryInterval,
		timeout:       DefaultTimeout,
		renderedPath:  DefaultRenderedPath,
	}}
	for _, o := range opts {
		if o == nil {
			b.errs = append(b.errs, errdefs.Kind(ErrInvalidOption, "stack %q: nil StackOption", name))
			continue
		}
		o.applyToStack(&b.stack)
	}
	return b
}

// Layer adds a layer that depends on nothing but what its options say.
func (b *Builder) Layer(name string, opts ...StepOption) *Builder {
	b.add(name, "", opts)
	return b
}

// Then adds a layer that depends on the previous one.
func (b *Builder) Then(name string, opts ...StepOption) *Builder {
	prev := ""
	if n := len(b.steps); n > 0 {
		prev = b.steps[n-1].name
	} else {
		b.errs = append(b.errs, &LayerError{Layer: name, Err: errdefs.Kind(ErrUnknownDependency, "Then has no previous layer to depend on; start with Layer")})
	}
	b.add(name, prev, opts)
	return b
}

// Add adds the layers of a preset such as Operator.
func (b *Builder) Add(p Preset) *Builder {
	if p == nil {
		b.errs = append(b.errs, errdefs.Kind(ErrInvalidOption, "nil Preset"))
		return b
	}
	p.expand(b)
	return b
}

func (b *Builder) add(name, prev string, opts []StepOption) *step {
	s := &step{name: name}
	if prev != "" {
		s.dependsOn = append(s.dependsOn, prev)
	}
	for _, o := range opts {
		if o == nil {
			s.errorf(ErrInvalidOption, "nil StepOption")
			continue
		}
		o.applyToStep(s)
	}
	b.steps = append(b.steps, s)
	return s
}

// node is a layer with its dependencies resolved.
type node struct {
	*step
	deps []string // resolved, deduplicated, known or not
}

// graph checks the layers and resolves their dependencies. It returns the
// nodes in declaration order and every problem found.
func (b *Builder) graph() ([]*node, []error) {
	errs := slices.Clone(b.errs)
	st := &b.stack
	errs = append(errs, st.errs...)
	if msg := nameProblem(st.name); msg != "" {
		errs = append(errs, errdefs.Kind(ErrInvalidName, "stack %q: %s", st.name, msg))
	}
	if msgs := validation.IsDNS1123Label(st.namespace); len(msgs) > 0 {
		errs = append(errs, errdefs.Kind(ErrInvalidName, "stack %q: invalid namespace %q: %s", st.name, st.namespace, strings.Join(msgs, "; ")))
	}
	switch {
	case st.oci == nil && st.sourceRef == nil:
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: no source: use FromOCI, FromOCIRepository or FromSource", st.name))
	case st.oci != nil && !strings.HasPrefix(st.oci.URL, "oci://"):
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: invalid source url %q: want oci://HOST/REPOSITORY", st.name, st.oci.URL))
	case st.sourceRef != nil && !slices.Contains(sourceKinds, st.sourceRef.Kind):
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: invalid source kind %q: want one of %s", st.name, st.sourceRef.Kind, strings.Join(sourceKinds, ", ")))
	case st.sourceRef != nil && st.sourceRef.Name == "":
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: source %s: a name is required", st.name, st.sourceRef.Kind))
	case st.sourceRef != nil && st.verify != nil:
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: Verify sets the stack's own OCIRepository's spec.verify: use FromOCI or FromOCIRepository, not FromSource", st.name))
	}
	if v := st.verify; v != nil || st.oci != nil {
		if v == nil {
			v = st.oci.Verify
		}
		for _, msg := range verificationProblems(v) {
			errs = append(errs, errdefs.Kind(ErrInvalidOption, "stack %q: %s", st.name, msg))
		}
	}

	layerErr := func(s *step, err error) {
		errs = append(errs, &LayerError{Layer: s.name, File: s.file, Line: s.line, Err: err})
	}
	nodes := make([]*node, 0, len(b.steps))
	index := make(map[string]int, len(b.steps))
	lastOperator := ""
	for _, s := range b.steps {
		if msg := nameProblem(s.name); msg != "" {
			layerErr(s, errdefs.Kind(ErrInvalidName, "%s", msg))
		}
		if first, dup := index[s.name]; dup {
			where := ""
			if f := nodes[first]; f.file != "" {
				where = fmt.Sprintf(" (first at %s:%d)", f.file, f.line)
			}
			layerErr(s, errdefs.Kind(ErrDuplicateLayer, "duplicate layer name%s", where))
			continue
		}
		for _, e := range s.errs {
			layerErr(s, e)
		}
		b.checkStep(s, layerErr)
		n := &node{step: s}
		deps := slices.Clone(s.dependsOn)
		if s.dependsOnOperator {
			if lastOperator == "" {
				layerErr(s, errdefs.Kind(ErrUnknownDependency, "DependsOnOperator: no earlier layer is marked as an operator"))
			} else {
				deps = append(deps, lastOperator)
			}
		}
		for _, d := range deps {
			if !slices.Contains(n.deps, d) {
				n.deps = append(n.deps, d)
			}
		}
		for _, d := range sortedKeys(s.readyExpr) {
			if !slices.Contains(n.deps, d) {
				layerErr(s, errdefs.Kind(ErrUnknownDependency, "readyExpr for %q, which is not a dependency", d))
			}
		}
		index[s.name] = len(nodes)
		nodes = append(nodes, n)
		if s.operator {
			lastOperator = s.name
		}
	}
	known := make([]string, len(nodes))
	for i, n := range nodes {
		known[i] = n.name
	}
	for _, n := range nodes {
		for _, d := range n.deps {
			if _, ok := index[d]; !ok {
				errs = append(errs, &LayerError{Layer: n.name, File: n.file, Line: n.line, Err: errdefs.Kind(ErrUnknownDependency, "depends on unknown layer %q%s", d, suggest.DidYouMean(d, known))})
			}
		}
	}
	names := make([]string, len(nodes))
	deps := make([][]string, len(nodes))
	for i, n := range nodes {
		names[i], deps[i] = n.name, n.deps
	}
	for _, c := range cycles(names, deps) {
		first := nodes[index[c[0]]]
		errs = append(errs, &LayerError{Layer: first.name, File: first.file, Line: first.line, Err: errdefs.Kind(ErrCycle, "dependency cycle %s", strings.Join(c, " -> "))})
	}
	return nodes, errs
}

var sourceKinds = []string{"OCIRepository", "GitRepository", "Bucket", "ExternalArtifact"}

// checkStep reports options that contradict each other.
func (b *Builder) checkStep(s *step, report func(*step, error)) {
	explicitWait := s.wait != nil && *s.wait
	if explicitWait && len(s.healthChecks) > 0 {
		report(s, errdefs.Kind(ErrInvalidOption, "wait: true makes Flux ignore healthChecks; drop Wait or the health checks"))
	}
	if explicitWait && s.guard != nil {
		report(s, errdefs.Kind(ErrInvalidOption, "WebhookGuard uses health checks, which wait: true ignores; drop Wait"))
	}
	if h := s.helm; h != nil {
		for _, e := range h.errs {
			report(s, errdefs.Kind(ErrInvalidOption, "%s", e))
		}
		if (h.chartRef == nil) == (h.chart == nil) {
			report(s, errdefs.Kind(ErrInvalidOption, "HelmRelease needs exactly one of ChartRef and Chart"))
		}
		if s.path != nil {
			report(s, errdefs.Kind(ErrInvalidOption, "a HelmRelease layer takes no Path: it applies releases/%s of the rendered directory", s.name))
		}
		return
	}
	if s.guard != nil && len(s.healthChecks) == 0 {
		report(s, errdefs.Kind(ErrInvalidOption, "WebhookGuard replaces wait with health checks: add HealthChecks on the operator's workload"))
	}
	// Components are relative to spec.path; Flux reads them from the
	// source only.
	layerPath := "./" + s.name
	if s.path != nil {
		layerPath = *s.path
	}
	for _, c := range s.components {
		if p := path.Join(layerPath, c); p == ".." || strings.HasPrefix(p, "../") {
			report(s, errdefs.Kind(ErrInvalidOption, "invalid component %q: relative to path %s, it leaves the source", c, layerPath))
		}
	}
}

// nameProblem says what is wrong with a layer or stack name, or "".
func nameProblem(name string) string {
	if len(validation.IsDNS1123Label(name)) == 0 {
		return ""
	}
	return "name must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (a DNS-1123 label of at most 63 characters)"
}

// cycles returns one cycle, as names ending where they start, for each
// strongly connected component of the graph that has one (Tarjan's
// algorithm), in declaration order. names[i] depends on deps[i]; a name
// that is not in names is left out; with duplicate names, the first one
// counts.
func cycles(names []string, deps [][]string) [][]string {
	n := len(names)
	index := make(map[string]int, n)
	for i, name := range names {
		if _, dup := index[name]; !dup {
			index[name] = i
		}
	}
	idx := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range idx {
		idx[i] = -1
	}
	var stackNodes []int
	var out [][]string
	counter := 0
	var strong func(v int)
	strong = func(v int) {
		idx[v], low[v] = counter, counter
		counter++
		stackNodes = append(stackNodes, v)
		on[v] = true
		for _, d := range deps[v] {
			w, ok := index[d]
			if !ok {
				continue
			}
			if idx[w] < 0 {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] != idx[v] {
			return
		}
		var comp []int
		for {
			w := stackNodes[len(stackNodes)-1]
			stackNodes = stackNodes[:len(stackNodes)-1]
			on[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		self := slices.Contains(deps[v], names[v])
		if len(comp) > 1 || self {
			out = append(out, cyclePath(names, deps, index, comp))
		}
	}
	for v := range names {
		if idx[v] < 0 && index[names[v]] == v {
			strong(v)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return index[a[0]] - index[b[0]] })
	return out
}

// cyclePath walks dependencies inside one component, from its first
// declared name back to it.
func cyclePath(names []string, deps [][]string, index map[string]int, comp []int) []string {
	in := make(map[int]bool, len(comp))
	start := comp[0]
	for _, c := range comp {
		in[c] = true
		start = min(start, c)
	}
	// Breadth-first search from start to start within the component gives
	// the shortest cycle through it.
	prev := map[int]int{}
	queue := []int{start}
	seen := map[int]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, d := range deps[v] {
			w, ok := index[d]
			if !ok || !in[w] {
				continue
			}
			if w == start {
				path := []string{names[start]}
				for u := v; u != start; u = prev[u] {
					path = append(path, names[u])
				}
				path = append(path, names[start])
				slices.Reverse(path) // start, what it needs, ..., v, start
				return path
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{names[start], names[start]}
}

// Draft returns the stack's Flux objects as they stand, with every problem
// Build would refuse them for (nil when there is none): what a linter
// reports as findings while it still checks the rest. Layers with problems
// are emitted as far as they can be.
func (b *Builder) Draft() (*Plan, []error) {
	nodes, errs := b.graph()
	return b.emit(nodes), errs
}

// Build checks the stack and returns its Flux objects. On any problem it
// returns nil and an error wrapping ErrInvalidPlan and every problem
// (*LayerError for those of one layer).
func (b *Builder) Build() (*Plan, error) {
	nodes, errs := b.graph()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPlan, errors.Join(errs...))
	}
	return b.emit(nodes), nil
}
