package layering

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// Lint rules, as Finding.Rule names them.
const (
	RuleGraph          = "graph"           // unknown dependency, cycle, duplicate or invalid name, bad option
	RulePath           = "path"            // the layer's path is missing or does not build
	RuleCRDOrder       = "crd-order"       // a custom resource whose CRD is not in an ancestor layer
	RuleWebhookOrder   = "webhook-order"   // a custom resource not behind the operator serving its webhook
	RuleOperatorWait   = "operator-wait"   // an operator layer without wait or health checks
	RuleNamespaceOrder = "namespace-order" // an object in a namespace no ancestor layer creates
	RuleCRDPrune       = "crd-prune"       // prune: true on a layer holding CRDs
	RuleHelmCRDs       = "helm-crds"       // a HelmRelease installing CRDs in the layer that uses them
	RuleVariables      = "variables"       // ${var} problems, checked by package substitute
)

// Finding is one problem Lint found. File is relative to the lint root (or
// the stack file), Line is 1-based; both are empty when the finding is about
// the layer as a whole and the layer was declared in Go.
type Finding struct {
	Rule    string `json:"rule"`
	Layer   string `json:"layer,omitempty"`
	Object  string `json:"object,omitempty"` // Kind/namespace/name
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	var b strings.Builder
	if f.File != "" {
		b.WriteString(f.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
		}
		b.WriteString(": ")
	}
	if f.Layer != "" {
		fmt.Fprintf(&b, "layer %q: ", f.Layer)
	}
	if f.Object != "" {
		b.WriteString(f.Object + ": ")
	}
	fmt.Fprintf(&b, "%s [%s]", f.Message, f.Rule)
	return b.String()
}

// Report is what Lint found.
type Report struct {
	Layers   int       `json:"layers"`
	Objects  int       `json:"objects"`
	Findings []Finding `json:"findings"`
}

// LintOption configures Lint. Only this package implements it.
type LintOption interface{ applyToLint(*lintConfig) }

type lintConfig struct {
	vars VarChecker
}

type funcLint func(*lintConfig)

func (f funcLint) applyToLint(c *lintConfig) { f(c) }

// WithVarChecker replaces the check of each layer's ${var} uses against
// the variables the layer makes available (RuleVariables), which is package
// substitute's static checks by default.
func WithVarChecker(c VarChecker) LintOption {
	return funcLint(func(l *lintConfig) { l.vars = c })
}

// LintFile reads a stack file and lints it: LoadStack, then Lint with the
// layer paths relative to the file. A stack that cannot be read is an error
// (ErrInvalidStack); everything else about it is a finding.
func LintFile(ctx context.Context, path string, opts ...LintOption) (*Report, error) {
	b, err := LoadStack(path)
	if err != nil {
		return nil, err
	}
	return Lint(ctx, b, "", opts...)
}

// lintLayer is a layer as the rules see it.
type lintLayer struct {
	*node
	index     int
	ancestors layerSet // every layer this one depends on, directly or not
	direct    map[string]bool
	ks        *kustomizev1.Kustomization
	helm      bool
	objects   []*object

	// What the rules ask of the objects, computed once.
	webhookGroups map[string]bool // groups whose webhooks the layer's configurations serve
	release       bool            // the layer installs a HelmRelease
	crdRelease    *object         // a HelmRelease of the layer that installs CRDs
	varFiles      []VarFile       // for the VarChecker
}

// Lint reads every layer's manifests under root (default: the stack file's
// directory, or ".") as kustomize-controller would build them, and reports
// the orders that race (see the Rule constants). Problems Build would
// refuse are findings too (RuleGraph). The error is only for what stops
// linting: a cancelled ctx.
//
// It reads files and never touches the network: kustomizations that point
// at URLs or git repositories are findings, not fetched.
func Lint(ctx context.Context, b *Builder, root string, opts ...LintOption) (*Report, error) {
	cfg := &lintConfig{vars: substituteChecker{}}
	for _, o := range opts {
		if o != nil {
			o.applyToLint(cfg)
		}
	}
	if root == "" {
		root = b.dir
	}
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", root, err)
	}
	l := &linter{b: b, root: abs, cfg: cfg, file: b.file}
	nodes, errs := b.graph()
	for _, err := range errs {
		l.graphFinding(err)
	}
	if err := l.load(ctx, nodes); err != nil {
		return nil, err
	}
	l.index()
	for _, ly := range l.layers {
		l.checkCRDs(ly)
		l.checkWebhooks(ly)
		l.checkNamespaces(ly)
		l.checkPrune(ly)
	}
	l.checkOperators()
	if err := l.checkVariables(ctx); err != nil {
		return nil, err
	}
	if b.dir != "" && root == b.dir {
		// Name the files of a stack file's layers as the user reaches them.
		for i, f := range l.findings {
			if f.File != "" && f.File != b.file {
				l.findings[i].File = filepath.ToSlash(filepath.Join(b.dir, filepath.FromSlash(f.File)))
			}
		}
	}
	rep := &Report{Layers: len(l.layers), Findings: l.findings}
	for _, ly := range l.layers {
		rep.Objects += len(ly.objects)
	}
	order := map[string]int{}
	for i, ly := range l.layers {
		order[ly.name] = i
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if oa, ob := order[a.Layer], order[b.Layer]; oa != ob {
			return oa < ob
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	return rep, nil
}

type linter struct {
	b        *Builder
	root     string
	file     string
	cfg      *lintConfig
	layers   []*lintLayer
	byName   map[string]*lintLayer
	findings []Finding

	operators  map[string][]*lintLayer // group/Kind → layers serving its webhooks
	crds       map[string][]crdDef     // group/Kind → where defined
	namespaces map[string][]string     // namespace → layers creating it
	scope      map[string]string       // group/Kind → Cluster or Namespaced
	mu         sync.Mutex
}

type crdDef struct {
	layer string
	obj   *object
}

func (l *linter) add(f Finding) {
	l.mu.Lock()
	l.findings = append(l.findings, f)
	l.mu.Unlock()
}

func (l *linter) objFinding(rule string, ly *lintLayer, o *object, format string, args ...any) {
	l.add(Finding{Rule: rule, Layer: ly.name, Object: o.ref(), File: o.file, Line: o.line, Message: fmt.Sprintf(format, args...)})
}

func (l *linter) layerFinding(rule string, ly *lintLayer, format string, args ...any) {
	f := Finding{Rule: rule, Layer: ly.name, Message: fmt.Sprintf(format, args...)}
	f.File, f.Line = splitAt(ly.at)
	l.add(f)
}

func splitAt(at string) (string, int) {
	if at == "" {
		return "", 0
	}
	i := strings.LastIndexByte(at, ':')
	var line int
	if _, err := fmt.Sscanf(at[i+1:], "%d", &line); err != nil {
		return at, 0
	}
	return at[:i], line
}

func (l *linter) graphFinding(err error) {
	var le *LayerError
	if errors.As(err, &le) {
		f := Finding{Rule: RuleGraph, Layer: le.Layer, Message: le.Err.Error()}
		f.File, f.Line = splitAt(le.At)
		l.add(f)
		return
	}
	l.add(Finding{Rule: RuleGraph, File: l.file, Message: err.Error()})
}

// load builds every layer's manifests, in parallel.
func (l *linter) load(ctx context.Context, nodes []*node) error {
	plan := l.b.emit(nodes)
	l.byName = map[string]*lintLayer{}
	for i, n := range nodes {
		ly := &lintLayer{node: n, index: i, ks: plan.Layers[i].Kustomization, helm: plan.Layers[i].HelmRelease != nil}
		if ly.helm {
			data, err := marshal(plan.Layers[i].HelmRelease)
			if err != nil {
				return err
			}
			o, _, err := parseObjects("", data, false)
			if err != nil {
				return err
			}
			for _, obj := range o {
				obj.file, obj.line = ly.at, 0
				if ly.at != "" {
					obj.file, obj.line = splitAt(ly.at)
				}
			}
			ly.objects = o
		}
		l.layers = append(l.layers, ly)
		if _, dup := l.byName[n.name]; !dup {
			l.byName[n.name] = ly
		}
	}
	_, builtin := l.cfg.vars.(substituteChecker) // it reads the uses, not VarFile.Data
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, ly := range l.layers {
		if ly.helm {
			continue
		}
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return err
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			spec := &ly.ks.Spec
			var patches []kustypes.Patch
			for _, p := range spec.Patches {
				kp := kustypes.Patch{Patch: p.Patch}
				if t := p.Target; t != nil {
					kp.Target = &kustypes.Selector{
						ResId:              resID(t.Group, t.Version, t.Kind, t.Name, t.Namespace),
						AnnotationSelector: t.AnnotationSelector,
						LabelSelector:      t.LabelSelector,
					}
				}
				patches = append(patches, kp)
			}
			objs, files, err := loadLayer(l.root, spec.Path, spec.TargetNamespace, patches, spec.Components, l.cfg.vars != nil && spec.PostBuild != nil, !builtin)
			if err != nil {
				file, line := splitAt(ly.at)
				var fe *FileError
				if errors.As(err, &fe) {
					file, line = fe.Path, fe.Line
					err = fe.Err
				}
				l.add(Finding{Rule: RulePath, Layer: ly.name, File: file, Line: line, Message: err.Error()})
				return
			}
			ly.objects, ly.varFiles = objs, files
		})
	}
	wg.Wait()
	return ctx.Err()
}

func resID(group, version, kind, name, namespace string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Name: name, Namespace: namespace}
}

// index computes ancestors and where CRDs and namespaces come from.
func (l *linter) index() {
	for _, ly := range l.layers {
		ly.direct = map[string]bool{}
		for _, d := range ly.deps {
			if _, ok := l.byName[d]; ok {
				ly.direct[d] = true
			}
		}
	}
	l.ancestors()
	l.operators = map[string][]*lintLayer{}
	l.crds = map[string][]crdDef{}
	l.namespaces = map[string][]string{}
	l.scope = map[string]string{}
	for _, ly := range l.layers {
		ly.webhookGroups = map[string]bool{}
		ly.release = ly.helm
		for _, o := range ly.objects {
			for _, g := range o.webhooks {
				ly.webhookGroups[g] = true
			}
			if o.helmCRDs != "" {
				ly.release = true
				if o.helmCRDs != "Skip" && ly.crdRelease == nil {
					ly.crdRelease = o
				}
			}
			if o.crd != nil {
				gk := o.crd.group + "/" + o.crd.kind
				l.crds[gk] = append(l.crds[gk], crdDef{layer: ly.name, obj: o})
				l.scope[gk] = o.crd.scope
			}
			if o.kind == "Namespace" && o.apiVersion == "v1" && !slices.Contains(l.namespaces[o.name], ly.name) {
				l.namespaces[o.name] = append(l.namespaces[o.name], ly.name)
			}
		}
	}
}

// layerSet is a set of layers by index.
type layerSet []uint64

func (s layerSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s layerSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s layerSet) union(t layerSet) {
	for w := range s {
		s[w] |= t[w]
	}
}

// all yields the indexes in s, in order.
func (s layerSet) all(yield func(int) bool) {
	for w, word := range s {
		for ; word != 0; word &= word - 1 {
			if !yield(w*64 + bits.TrailingZeros64(word)) {
				return
			}
		}
	}
}

// isAncestor reports whether ly depends on the layer named name, directly
// or not.
func (l *linter) isAncestor(ly *lintLayer, name string) bool {
	a, ok := l.byName[name]
	return ok && ly.ancestors.has(a.index)
}

// ancestors sets every layer's ancestors: in one walk, each layer's set is
// the union of its dependencies' sets, when the graph has no cycle (a
// cycle is a graph finding already); with one, each layer walks the graph
// on its own, which is quadratic but only for a stack that cannot build.
func (l *linter) ancestors() {
	words := (len(l.layers) + 63) / 64
	for _, ly := range l.layers {
		ly.ancestors = make(layerSet, words)
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]uint8, len(l.layers))
	cyclic := false
	var visit func(ly *lintLayer)
	visit = func(ly *lintLayer) {
		state[ly.index] = visiting
		for d := range ly.direct {
			dep := l.byName[d]
			switch state[dep.index] {
			case unseen:
				visit(dep)
			case visiting:
				cyclic = true
				continue
			}
			ly.ancestors.union(dep.ancestors)
			ly.ancestors.add(dep.index)
		}
		state[ly.index] = done
	}
	for _, ly := range l.layers {
		if state[ly.index] == unseen {
			visit(ly)
		}
	}
	for _, ly := range l.layers {
		if cyclic {
			l.walkAncestors(ly)
		}
		// A layer is not its own ancestor, by name: with duplicate names
		// or a cycle, a graph finding already.
		self := l.byName[ly.name].index
		ly.ancestors[self/64] &^= 1 << (self % 64)
	}
}

// walkAncestors sets ly's ancestors by walking the graph from it.
func (l *linter) walkAncestors(ly *lintLayer) {
	clear(ly.ancestors)
	stack := slices.Collect(mapKeys(ly.direct))
	for len(stack) > 0 {
		a := l.byName[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if ly.ancestors.has(a.index) {
			continue
		}
		ly.ancestors.add(a.index)
		stack = slices.AppendSeq(stack, mapKeys(a.direct))
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, k := range sortedKeys(m) {
			if !yield(k) {
				return
			}
		}
	}
}
