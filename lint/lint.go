package lint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// Rule names a lint rule in a Finding.
type Rule string

// Lint rules.
const (
	RuleGraph          Rule = "graph"               // unknown dependency, cycle, duplicate or invalid name, bad option
	RulePath           Rule = "path"                // the layer's path is missing or does not build
	RuleSource         Rule = "source"              // a source the tree declares is broken (an ArtifactGenerator that cannot be read); one that is merely not available offline is Coverage, not a finding
	RuleCRDOrder       Rule = "crd-order"           // a custom resource whose CRD is not in an ancestor layer
	RuleWebhookOrder   Rule = "webhook-order"       // a custom resource not behind the operator serving its webhook
	RuleOperatorWait   Rule = "operator-wait"       // an operator layer without wait or health checks
	RuleNamespaceOrder Rule = "namespace-order"     // an object in a namespace no ancestor layer creates
	RuleCRDPrune       Rule = "crd-prune"           // prune: true on a layer holding CRDs
	RuleHelmCRDs       Rule = "helm-crds"           // a HelmRelease installing CRDs in the layer that uses them
	RuleHealthCheck    Rule = "health-check"        // a health check on an object no layer (or no ancestor) creates
	RuleSubstituteFrom Rule = "substitute-from"     // a substituteFrom source nothing creates, or a later layer does
	RuleNoPostBuild    Rule = "no-postbuild"        // ${var} of the platform's variables (provided, or substituted in other layers) in a layer without postBuild
	RuleVariables      Rule = "variables"           // ${var} problems, checked by package substitute
	RuleChart          Rule = "chart"               // a HelmRelease's chart does not render, as helm-controller would fail
	RuleValuesFrom     Rule = "values-from"         // a HelmRelease's valuesFrom that nothing creates, or a layer it does not depend on
	RuleDualOwner      Rule = "dual-owner"          // an object two layers apply: they fight over it, and the last applier's prune deletes it
	RuleCrossNamespace Rule = "cross-namespace-ref" // with --no-cross-namespace-refs: a source in another namespace, which Flux refuses
	RuleMerge          Rule = "merge"               // a hint: layers that could be one Kustomization, saving dependency polling
)

// Race reports whether a finding of the rule is a race: what fails or
// races on a first bootstrap only because of the order the layers apply
// in (a CRD, a webhook, a namespace, a Secret not there yet). The other
// rules find mistakes that fail whatever the order (a path that does not
// build, a dependency the platform does not have, a chart that does not
// render).
func (r Rule) Race() bool {
	switch r {
	case RuleCRDOrder, RuleWebhookOrder, RuleOperatorWait, RuleNamespaceOrder, RuleHelmCRDs, RuleSubstituteFrom, RuleValuesFrom:
		return true
	}
	return false
}

// Rules lists every rule, in the order lint's help shows them. The slice
// is the caller's: changing it changes no other caller's list.
func Rules() []Rule {
	return []Rule{RuleGraph, RulePath, RuleSource, RuleCRDOrder, RuleWebhookOrder, RuleOperatorWait, RuleNamespaceOrder,
		RuleCRDPrune, RuleHelmCRDs, RuleChart, RuleValuesFrom, RuleHealthCheck, RuleSubstituteFrom, RuleNoPostBuild, RuleVariables, RuleDualOwner, RuleCrossNamespace, RuleMerge}
}

// Severity says what a Finding means for lint's verdict: the one
// severity of fluxpack's checks (substitute's static checks grade theirs
// with it too).
type Severity = substitute.Severity

// Severities. Errors and warnings fail lint (fluxpack lint exits 1); hints
// do not.
const (
	// SeverityError: the platform races, or Flux fails a layer.
	SeverityError = substitute.SeverityError
	// SeverityWarning: Flux applies something other than what was meant
	// (a variable retyped, say). It fails lint as an error does.
	SeverityWarning = substitute.SeverityWarning
	// SeverityHint: nothing is wrong, but the platform could do better
	// (RuleMerge). It does not fail lint.
	SeverityHint = substitute.SeverityHint
)

// Finding is one problem (or hint) Lint found. File and Line are where it
// is (the object's file and line, relative to the lint root, or the layer's
// declaration); LayerFile and LayerLine are where the layer is declared
// (the stack file, or the file of a repository's Kustomization) when that
// is another place. Both are empty for a layer declared in Go. Severity
// says whether it fails lint (Fails); an empty Severity is an error.
//
// A problem found at several places (a ${var} used in many objects, one
// custom resource a namespace applied before its operator) is one
// Finding: Places lists every place, and File, Line and Object are the
// first place's (Object only when every place names the same object).
type Finding struct {
	Rule      Rule     `json:"rule"`
	Severity  Severity `json:"severity,omitempty"`
	Layer     string   `json:"layer,omitempty"`
	Object    string   `json:"object,omitempty"` // Kind/namespace/name
	File      string   `json:"file,omitempty"`
	Line      int      `json:"line,omitempty"`
	LayerFile string   `json:"layerFile,omitempty"`
	LayerLine int      `json:"layerLine,omitempty"`
	Message   string   `json:"message"`
	// Places are the places of a problem found at more than one, in
	// order of file and line; nil when it was found at one (File, Line
	// and Object).
	Places []Place `json:"places,omitempty"`
	// Merge is what a RuleMerge hint proposes, nil for other rules.
	Merge *Merge `json:"merge,omitempty"`
	// DependOn is the missing edge of an ordering finding: the layers
	// that make what this layer needs (a CRD, a webhook, a namespace, a
	// Secret, a health-checked object), one of which it must depend on;
	// the first is the one to add. Nil for other findings.
	DependOn []string `json:"dependOn,omitempty"`
}

// Place is one place where a Finding's problem is: the object, and its
// file and line.
type Place struct {
	Object string `json:"object,omitempty"` // Kind/namespace/name
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// String formats p as file:line: Object.
func (p Place) String() string {
	var parts []string
	if p.File != "" {
		loc := p.File
		if p.Line > 0 {
			loc += fmt.Sprintf(":%d", p.Line)
		}
		parts = append(parts, loc)
	}
	if p.Object != "" {
		parts = append(parts, p.Object)
	}
	return strings.Join(parts, ": ")
}

// Fails reports whether the finding fails lint: an error or a warning,
// not a hint.
func (f Finding) Fails() bool { return f.Severity != SeverityHint }

// AllPlaces returns every place of f: Places, or f's own place.
func (f Finding) AllPlaces() []Place {
	if len(f.Places) > 0 {
		return f.Places
	}
	return []Place{{Object: f.Object, File: f.File, Line: f.Line}}
}

// Split returns f once for each of its places, each without Places: the
// findings Group makes f of.
func (f Finding) Split() []Finding {
	if len(f.Places) == 0 {
		return []Finding{f}
	}
	out := make([]Finding, len(f.Places))
	for i, p := range f.Places {
		g := f
		g.Places, g.Object, g.File, g.Line = nil, p.Object, p.File, p.Line
		out[i] = g
	}
	return out
}

// Group makes one Finding of the findings that are one problem found at
// several places: the same rule, severity, layer (and where it is
// declared) and message, whatever their objects, files and lines. The
// Finding is where the first of them is and lists every place (Places),
// each once, in order of file and line. Findings keep the order of their
// first; a RuleMerge hint stays as it is.
func Group(findings []Finding) []Finding {
	type key struct {
		rule                  Rule
		severity              Severity
		layer, layerFile, msg string
		layerLine             int
	}
	at := map[key]int{}
	var out []Finding
	for _, f := range findings {
		if f.Merge != nil {
			out = append(out, f)
			continue
		}
		k := key{f.Rule, f.Severity, f.Layer, f.LayerFile, f.Message, f.LayerLine}
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			f.Places = slices.Clone(f.AllPlaces())
			out = append(out, f)
			continue
		}
		out[i].Places = append(out[i].Places, f.AllPlaces()...)
	}
	for i := range out {
		g := &out[i]
		if g.Merge != nil {
			continue
		}
		slices.SortStableFunc(g.Places, func(a, b Place) int {
			return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), strings.Compare(a.Object, b.Object))
		})
		g.Places = slices.Compact(g.Places)
		first := g.Places[0]
		g.File, g.Line, g.Object = first.File, first.Line, first.Object
		for _, p := range g.Places[1:] {
			if p.Object != first.Object {
				g.Object = ""
				break
			}
		}
		if len(g.Places) == 1 {
			g.Places = nil
		}
	}
	return out
}

func (f Finding) String() string {
	var b strings.Builder
	if f.File != "" {
		b.WriteString(errdefs.Place(f.File, f.Line) + ": ")
	}
	if f.Layer != "" {
		fmt.Fprintf(&b, "layer %q", f.Layer)
		// A folder without a line: the entry point of a tree with no
		// root Kustomization.
		if f.LayerFile != "" {
			fmt.Fprintf(&b, " (%s)", errdefs.Place(f.LayerFile, f.LayerLine))
		}
		b.WriteString(": ")
	}
	if f.Object != "" {
		b.WriteString(f.Object + ": ")
	}
	b.WriteString(f.Marked())
	if len(f.Places) > 1 {
		fmt.Fprintf(&b, " (%d places)", len(f.Places))
	}
	fmt.Fprintf(&b, " [%s]", f.Rule)
	return b.String()
}

// Marked is the message as text shows it: after "warning: " or "hint: "
// for a finding of that severity (-o json has Severity instead), so that
// a rule's severity, set in the configuration file or not, is said the
// same way for every rule.
func (f Finding) Marked() string {
	switch f.Severity {
	case SeverityWarning, SeverityHint:
		return string(f.Severity) + ": " + f.Message
	}
	return f.Message
}

// Report is what lint found: the findings that fail lint first, then the
// hints; and what it could not check (Coverage).
type Report struct {
	Layers  int `json:"layers"`
	Objects int `json:"objects"`
	// Checked counts the layers every rule could decide for: Layers less
	// those a Coverage entry names.
	Checked  int       `json:"checked"`
	Findings []Finding `json:"findings"`
	// Suppressed are the findings the configuration accepts, each with its
	// reason (Config.Suppress).
	Suppressed []Suppressed `json:"suppressed,omitempty"`
	// Bootstrap says what lint took as existing before Flux from a
	// bootstrap step: its helmfiles (WithHelmfile), the folders it
	// applies with kustomize (WithBootstrapKustomization) and the files it
	// applies with kubectl (WithBootstrapManifests,
	// WithFilteredBootstrapManifest).
	Bootstrap []string `json:"bootstrap,omitempty"`
	// Unrun names the programs a bootstrap step pipes files through that
	// lint does not run (WithFilteredBootstrapManifest), once each: it
	// took those files' objects as the files have them.
	Unrun []string `json:"unrun,omitempty"`
	// Coverage says, once per cause, which layers lint could not check
	// fully and how to make them checkable. A layer named there may race in
	// ways no finding reports: lint does not guess.
	Coverage []Coverage `json:"coverage"`
}

// Coverage causes.
const (
	// CoverageSource: a layer's source cannot be read offline, so its
	// objects are unknown; the layers applied after it are not fully
	// checked either (what they need may be among those objects).
	CoverageSource = "source"
	// CoverageChart: a HelmRelease's chart could not be rendered, so the
	// CRDs, webhooks, namespaces and objects in it are unknown to the
	// layer and to those applied after it.
	CoverageChart = "chart"
	// CoverageRemote: a layer's kustomization names a remote resource (a
	// URL or a Git repository), which kustomize-controller fetches and
	// lint does not, so its objects are unknown; the layers applied after
	// it are not fully checked either.
	CoverageRemote = "remote"
)

// Coverage is one cause that kept lint from checking some layers fully.
type Coverage struct {
	Cause string `json:"cause"`
	// Layers are the layers not fully checked for this cause.
	Layers []string `json:"layers"`
	// Missing names what lint could not read: sources (Kind/namespace/name)
	// or HelmReleases whose charts it could not render, each with why.
	Missing []string `json:"missing"`
	// Advice says how to make them checkable.
	Advice string `json:"advice"`
}

// Reasons says once each reason Missing gives: the layers of one source
// that could not be fetched are one line, "why (layers "a", "b")".
func (c Coverage) Reasons() []string {
	var order []string
	layers := map[string][]string{}
	for _, m := range c.Missing {
		why, layer := m, ""
		if rest, ok := strings.CutPrefix(m, "layer "); ok {
			if name, after, ok := strings.Cut(rest, ": "); ok {
				why, layer = after, name
			}
		}
		if _, seen := layers[why]; !seen {
			order = append(order, why)
			layers[why] = nil
		}
		if layer != "" {
			layers[why] = append(layers[why], layer)
		}
	}
	out := make([]string, 0, len(order))
	for _, why := range order {
		switch ls := layers[why]; len(ls) {
		case 0:
			out = append(out, why)
		case 1:
			out = append(out, fmt.Sprintf("%s (layer %s)", why, ls[0]))
		default:
			out = append(out, fmt.Sprintf("%s (layers %s)", why, strings.Join(ls, ", ")))
		}
	}
	return out
}

// Summary is the report in one line: the findings, and how much of the
// platform lint checked fully, with what would let it check the rest.
func (r *Report) Summary() string {
	var b strings.Builder
	b.WriteString(findingsIn(r.Failing(), len(r.Findings)-r.Failing(),
		fmt.Sprintf("%d layer%s, %d object%s", r.Layers, plural(r.Layers, "", "s"), r.Objects, plural(r.Objects, "", "s"))))
	if len(r.Suppressed) > 0 {
		fmt.Fprintf(&b, "; %d suppressed by the configuration", len(r.Suppressed))
	}
	if len(r.Bootstrap) > 0 {
		fmt.Fprintf(&b, "; read %d entr%s of the bootstrap step as there before Flux (Bootstrap)", len(r.Bootstrap), plural(len(r.Bootstrap), "y", "ies"))
		if len(r.Unrun) > 0 {
			fmt.Fprintf(&b, ", some through %s, which lint does not run", strings.Join(r.Unrun, " and "))
		}
	}
	if len(r.Coverage) > 0 {
		fmt.Fprintf(&b, "; checked %d of %d layers fully", r.Checked, r.Layers)
		for _, c := range r.Coverage {
			need := map[string]string{CoverageSource: "behind a source lint could not read", CoverageChart: plural(len(c.Layers), "needs charts", "need charts"),
				CoverageRemote: "behind a remote resource lint does not fetch"}[c.Cause]
			fmt.Fprintf(&b, "; %d %s: %s", len(c.Layers), need, c.Advice)
		}
	}
	return b.String()
}

// findingsIn is "N findings in WHERE (and M hints)".
func findingsIn(failing, hints int, where string) string {
	s := "no findings"
	if failing > 0 {
		s = fmt.Sprintf("%d finding%s", failing, plural(failing, "", "s"))
	}
	s += " in " + where
	if hints > 0 {
		s += fmt.Sprintf(" (and %d hint%s)", hints, plural(hints, "", "s"))
	}
	return s
}

// Failing counts the findings that fail lint (Finding.Fails).
func (r *Report) Failing() int { return failing(r.Findings) }

// failing counts the findings of fs that fail lint.
func failing(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Fails() {
			n++
		}
	}
	return n
}

// Merges returns what the report's RuleMerge hints propose, in their
// order: the layers that could be one Kustomization each.
func (r *Report) Merges() []Merge {
	var out []Merge
	for _, f := range r.Findings {
		if f.Merge != nil {
			out = append(out, *f.Merge)
		}
	}
	return out
}

// Option configures a lint. Only this package implements it.
type Option interface{ applyToLint(*config) error }

type config struct {
	external             []layering.ObjectRef
	existingNamespaces   []string            // WithExistingNamespaces
	existingGroups       []string            // WithExistingAPIGroups
	existingWebhooks     map[string]bool     // WithExistingWebhooks, WithHelmfile: webhookKey keys
	bootstrap            []bootstrap.Release // WithHelmfile
	bootstrapDirs        []string            // WithBootstrapKustomization
	bootstrapManifests   []string            // WithBootstrapManifests, WithFilteredBootstrapManifest
	bootstrapThrough     map[string][]string // WithFilteredBootstrapManifest: the programs by file
	bootstrapNamespaces  []string            // WithBootstrapNamespaces
	severities           map[Rule]string     // Config.Rules
	suppress             []Suppression       // Config.Suppress
	repository           bool                // a Plan read from a repository, not a stack: advice names the config file and flags
	inferredRoot         bool                // WithInferredRoot
	noCrossNamespaceRefs bool                // WithNoCrossNamespaceRefs
	noRemoteBases        bool                // WithNoRemoteBases
	charts               []charts.Option     // WithCharts
	finder               *charts.Finder      // of charts and fetcher
	operators            map[string][]string // WithOperators
	fetcher              charts.Fetcher      // WithChartFetcher
	objects              *ObjectCache        // WithObjectCache
	discovery            Discovery           // WithDiscovery, for Tree
	noDiscovery          bool                // WithoutDiscovery, for Tree
	outputs              map[string]string   // WithOutputsFile: vars entry → file
}

type funcLint func(*config) error

func (f funcLint) applyToLint(c *config) error { return f(c) }

// WithExternal declares objects that exist before the layers, made outside
// the platform (the ConfigMap of cluster variables Terraform writes, say),
// so a substituteFrom or health check naming them is no finding.
func WithExternal(refs ...layering.ObjectRef) Option {
	return funcLint(func(c *config) error {
		for _, r := range refs {
			if r.Kind == "" || r.Name == "" {
				return errdefs.Kind(ErrInvalidOption, "external object %s: kind and name are required", r)
			}
		}
		c.external = append(c.external, refs...)
		return nil
	})
}

// WithExistingNamespaces declares namespaces that exist before Flux
// applies anything (made by IaC or a bootstrap step before Flux, say): no
// layer needs to create them. A stack says so in spec.existingNamespaces.
func WithExistingNamespaces(namespaces ...string) Option {
	return appendNames("existing namespace", namespaces, validation.IsDNS1123Label, func(c *config) *[]string { return &c.existingNamespaces })
}

// WithExistingAPIGroups declares API groups whose CRDs exist before Flux
// applies anything (installed by a bootstrap step before Flux, say): no
// layer needs to define them. A stack says so in spec.existingAPIGroups.
func WithExistingAPIGroups(groups ...string) Option {
	return appendNames("existing API group", groups, validation.IsDNS1123Subdomain, func(c *config) *[]string { return &c.existingGroups })
}

// appendNames is the body of an option that declares names: it refuses
// them if check (a validation.IsDNS1123… function) finds fault with one
// ("WHAT NAME: why"), else appends them to the list field points at.
func appendNames(what string, names []string, check func(string) []string, field func(*config) *[]string) Option {
	return funcLint(func(c *config) error {
		for _, name := range names {
			if msgs := check(name); len(msgs) > 0 {
				return errdefs.Kind(ErrInvalidOption, "%s %q: %s", what, name, strings.Join(msgs, "; "))
			}
		}
		list := field(c)
		*list = append(*list, names...)
		return nil
	})
}

// File reads a stack file and lints it: stackfile.Load, then Stack
// with the layer paths relative to the file, and with the configuration
// file beside it (ConfigFile, or WithDiscovery's) before opts, as
// `fluxpack lint -f` does, unless WithoutDiscovery. A stack that cannot be read
// is an error (stackfile.ErrInvalid); everything else about it is a
// finding.
func File(ctx context.Context, path string, opts ...Option) (*Report, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	b, err := stackfile.Load(path)
	if err != nil {
		return nil, err
	}
	if !cfg.noDiscovery {
		conf, _, err := Discover(filepath.Dir(path), "", Discovery{ConfigFile: cfg.discovery.ConfigFile, NoBootstrap: true})
		if err != nil {
			return nil, err
		}
		opts = slices.Concat(conf, opts)
	}
	return Stack(ctx, b, "", opts...)
}

// Stack reads every layer's manifests under root (default: the stack
// file's directory, or ".") as kustomize-controller would build them
// (package fluxbuild), and reports the orders that race (see the Rule
// constants). Problems Build would refuse are findings too (RuleGraph).
// The error is only for what stops linting: a cancelled ctx, a bad option.
//
// It reads files and never touches the network: kustomizations that point
// at URLs or git repositories are findings, not fetched.
func Stack(ctx context.Context, b *layering.Builder, root string, opts ...Option) (*Report, error) {
	p, problems := b.Draft()
	if root == "" {
		root = p.Dir
	}
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", root, err)
	}
	inputs := make([]fluxbuild.Input, len(p.Layers))
	for i := range inputs {
		inputs[i].Source = &fluxbuild.Source{Dir: abs}
	}
	rep, err := lintPlan(ctx, p, inputs, problems, abs, opts)
	if err != nil {
		return nil, err
	}
	if p.Dir != "" && root == p.Dir {
		// Name the files of a stack file's layers as the user reaches them;
		// the files that declare layers (the stack file, a fleet file's
		// extra layers) are named so already.
		declared := map[string]bool{p.File: true}
		for _, ly := range p.Layers {
			declared[ly.File] = true
		}
		reach := func(file string) string {
			if file == "" || declared[file] {
				return file
			}
			return filepath.ToSlash(filepath.Join(p.Dir, filepath.FromSlash(file)))
		}
		for i, f := range rep.Findings {
			rep.Findings[i].File = reach(f.File)
			for j, pl := range f.Places {
				f.Places[j].File = reach(pl.File)
			}
		}
	}
	return rep, nil
}

// Plan lints a Plan whose layers' manifests are where inputs say, one
// fluxbuild.Input per layer in the Plan's order: a Plan that package fluxrepo read
// from a Flux repository, say. Graph problems (unknown dependencies,
// cycles, duplicate names) are findings. Files in findings are relative to
// root when they lie under it.
func Plan(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, root string, opts ...Option) (*Report, error) {
	if len(inputs) != len(p.Layers) {
		return nil, errdefs.Kind(ErrInvalidOption, "plan %q: %d inputs for %d layers", p.Name, len(inputs), len(p.Layers))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", root, err)
	}
	// A new slice: the caller's opts may be shared by lints running at once.
	return lintPlan(ctx, p, inputs, p.Problems(), abs, slices.Concat(opts, []Option{funcLint(func(c *config) error {
		c.repository = true
		return nil
	})}))
}

// WithInferredRoot says the repository's root was found, not given (no
// .git above the entry point, say): a path that does not exist may be
// read from the wrong root, and its finding advises --root.
func WithInferredRoot() Option {
	return funcLint(func(c *config) error {
		c.inferredRoot = true
		return nil
	})
}

func newConfig(opts []Option) (*config, error) {
	cfg := &config{}
	if err := errdefs.ApplyOptions(cfg, opts, Option.applyToLint, "nil lint Option"); err != nil {
		return nil, err
	}
	copts := slices.Clone(cfg.charts)
	if cfg.fetcher != nil {
		copts = append(copts, charts.WithFetcher(cfg.fetcher))
	}
	f, err := charts.New(copts...)
	if err != nil {
		return nil, err
	}
	cfg.finder = f
	return cfg, nil
}

func lintPlan(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, problems []error, root string, opts []Option) (*Report, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.outputs)) {
		if !slices.ContainsFunc(p.Vars, func(v layering.VarsEntry) bool { return v.Name == name }) {
			return nil, errdefs.Kind(ErrInvalidOption, "outputs file of vars entry %q: plan %q has no such vars entry", name, p.Name)
		}
	}
	l := &linter{p: p, inputs: inputs, root: root, cfg: cfg}
	l.applyBootstrap()
	l.applyBootstrapDirs(ctx)
	l.applyBootstrapManifests()
	// An unknown dependency may be a Kustomization in what lint could not
	// read: said once the layers are loaded.
	var deps []error
	for _, err := range problems {
		if errors.Is(err, layering.ErrUnknownDependency) {
			deps = append(deps, err)
			continue
		}
		l.graphFinding(err, "")
	}
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	for _, err := range deps {
		l.graphFinding(err, l.unreadLayers())
	}
	l.chartObjects(ctx)
	l.index()
	for _, ly := range l.layers {
		l.checkCRDs(ly)
		l.checkWebhooks(ly)
		l.checkNamespaces(ly)
		l.checkPrune(ly)
		l.checkHealthChecks(ly)
		l.checkReleases(ly)
		l.checkCrossNamespace(ly)
	}
	l.checkOperators()
	l.checkOwners()
	if err := l.checkVariables(ctx); err != nil {
		return nil, err
	}
	if len(problems) == 0 {
		l.checkMerges()
	}
	for i := range l.findings {
		if l.findings[i].Severity == "" {
			l.findings[i].Severity = SeverityError
		}
	}
	var suppressed []Suppressed
	l.findings, suppressed = l.judge(l.findings, time.Now())
	l.findings = Group(l.findings)
	rep := &Report{Suppressed: suppressed, Layers: len(l.layers), Findings: l.findings, Coverage: l.coverage(), Bootstrap: l.bootstrap, Unrun: l.unrun()}
	rep.Checked = rep.Layers
	partly := map[string]bool{}
	for _, c := range rep.Coverage {
		for _, name := range c.Layers {
			partly[name] = true
		}
	}
	rep.Checked -= len(partly)
	for _, ly := range l.layers {
		rep.Objects += len(ly.objects)
	}
	order := map[string]int{}
	for i, ly := range l.layers {
		order[ly.Name] = i
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if fa, fb := a.Fails(), b.Fails(); fa != fb {
			return fa
		}
		if oa, ob := order[a.Layer], order[b.Layer]; oa != ob {
			return oa < ob
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	if rep.Coverage == nil {
		rep.Coverage = []Coverage{}
	}
	return rep, nil
}

// coverage says which layers the rules could not decide for, by cause: a
// layer lint could not read (or one after it), a chart it could not render
// (in the layer or one applied before it).
func (l *linter) coverage() []Coverage {
	var out []Coverage
	source := Coverage{Cause: CoverageSource}
	chart := Coverage{Cause: CoverageChart}
	remote := Coverage{Cause: CoverageRemote}
	isRemote := func(a *lintLayer) bool { return a.remote != "" }
	for _, ly := range l.layers {
		if ly.unknown && ly.Source == nil {
			why := ly.Unavailable
			if why == "" {
				why = "its source is not read"
			}
			source.Missing = append(source.Missing, fmt.Sprintf("layer %q: %s", ly.Name, why))
		}
		if ly.unknown && ly.Source == nil || l.unknownAncestorWhere(ly, func(a *lintLayer) bool { return !isRemote(a) }) || l.undecidedBy[CoverageSource][ly.Name] {
			source.Layers = append(source.Layers, ly.Name)
		}
		if isRemote(ly) {
			remote.Missing = append(remote.Missing, fmt.Sprintf("layer %q: %s", ly.Name, ly.remote))
		}
		if isRemote(ly) || l.unknownAncestorWhere(ly, isRemote) || l.undecidedBy[CoverageRemote][ly.Name] {
			remote.Layers = append(remote.Layers, ly.Name)
		}
		for _, o := range ly.objects {
			if o.helmCRDs != "" && !o.rendered && o.chartErr != nil && errors.Is(o.chartErr, charts.ErrUnavailable) {
				chart.Missing = append(chart.Missing, fmt.Sprintf("%s: %v", o.ref(), o.chartErr))
			}
		}
		if l.missingChart(ly) || l.undecidedBy[CoverageChart][ly.Name] {
			chart.Layers = append(chart.Layers, ly.Name)
		}
	}
	if len(source.Layers) > 0 {
		source.Advice = "fetch them (--sources online) or map each source to a local directory (--source KIND/NAMESPACE/NAME=DIR)"
		if l.online() {
			source.Advice = "they could not be fetched (each says why): check the network and the credentials, or map each source to a local directory (--source KIND/NAMESPACE/NAME=DIR)"
		}
		if !l.cfg.repository {
			source.Advice = "give each layer a path that builds offline"
		}
		out = append(out, source)
	}
	if len(remote.Layers) > 0 {
		remote.Advice = "kustomize-controller fetches remote resources and lint does not: vendor them into the repository to have them checked (or, for controllers run with --no-remote-bases, lint with --no-remote-bases, which makes each a finding)"
		out = append(out, remote)
	}
	if len(chart.Layers) > 0 {
		chart.Advice = "fetch them (--sources online: HTTP and OCI Helm repositories, version ranges) or give lint the charts (--charts DIR, a folder of chart folders or packaged .tgz)"
		if l.online() {
			chart.Advice = "they could not be fetched (each says why): check the network and the credentials, or give lint the charts (--charts DIR, a folder of chart folders or packaged .tgz)"
		}
		out = append(out, chart)
	}
	return out
}

// online reports whether lint was given a fetcher that resolves sources
// and charts (--sources online): then advising it helps nobody.
func (l *linter) online() bool {
	_, ok := l.cfg.fetcher.(charts.Resolver)
	return ok
}

// lintLayer is a layer as the rules see it.
type lintLayer struct {
	*layering.Layer
	*fluxbuild.Input
	index     int
	ancestors layerSet // every layer this one depends on, directly or not: Ready before it
	// readyBefore: the ancestors, and those of the layer that applies
	// this one's Kustomization (transitively): a parent applies its
	// children only once its own dependsOn are Ready.
	readyBefore layerSet
	applied     layerSet // every layer whose objects exist before this one reconciles
	direct      map[string]bool
	objects     []*object
	unknown     bool   // the layer's objects could not be read: rules do not guess
	remote      string // why: its kustomization names a remote resource lint does not fetch

	// What the rules ask of the objects, computed once.
	webhooks map[string]bool // what the webhooks the layer applies intercept (webhookKey keys)
	release  bool            // the layer installs a HelmRelease
	// hiddenChart: a HelmRelease of the layer whose chart lint did not
	// render; missingChart: one whose chart lint could not get.
	hiddenChart, missingChart bool
	unrendered                []*object          // HelmReleases of the layer whose chart lint could not render and that may install CRDs (install.crds not Skip)
	assumed                   map[string]*object // webhookKey keys only KnownOperators says the layer serves: the HelmRelease of the chart lint could not see
}

type linter struct {
	p        *layering.Plan
	inputs   []fluxbuild.Input
	root     string
	cfg      *config
	layers   []*lintLayer
	byName   map[string]*lintLayer
	findings []Finding

	operators  map[string][]*lintLayer // group/Kind → layers serving its webhooks
	crUsers    map[string]layerSet     // group → layers applying a custom resource of it themselves (usersOf)
	crds       map[string][]crdDef     // group/Kind → where defined
	namespaces map[string][]string     // namespace → layers creating it
	// clusterSecrets are the ClusterExternalSecrets the layers apply.
	clusterSecrets []layerObject
	scope          map[string]string // group/Kind → Cluster or Namespaced
	mu             sync.Mutex

	undecidedBy map[string]map[string]bool // Coverage cause → layers a rule could not decide for

	bootstrap []string // what lint took from helmfiles (Report.Bootstrap)
	through   []string // the programs bootstrap files came through (Report.Unrun)

	missingFrom  map[string][]*lintLayer // substituteFrom sources no layer makes in time → the layers reading them
	missingOrder []string
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

// rel names a file of a finding: relative to the lint root when under it.
func (l *linter) rel(file string) string {
	if file == "" || !filepath.IsAbs(file) {
		return file
	}
	if r, err := filepath.Rel(l.root, file); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(file)
}

func (l *linter) objFinding(rule Rule, ly *lintLayer, o *object, format string, args ...any) {
	l.objEdge(rule, ly, o, nil, format, args...)
}

// objEdge is objFinding for a missing edge: ly must depend on one of deps.
func (l *linter) objEdge(rule Rule, ly *lintLayer, o *object, deps []string, format string, args ...any) {
	f := Finding{DependOn: deps, Rule: rule, Layer: ly.Name, Object: o.ref(), File: o.File, Line: o.Line, Message: fmt.Sprintf(format, args...)}
	if o.release != nil {
		f.Message += fmt.Sprintf(" (in the chart %s installs)", o.release.ref())
	}
	if ly.File != "" && (ly.File != o.File || ly.Line != o.Line) {
		f.LayerFile, f.LayerLine = ly.File, ly.Line
	}
	l.add(f)
}

func (l *linter) layerFinding(rule Rule, ly *lintLayer, format string, args ...any) {
	l.layerEdge(rule, ly, nil, format, args...)
}

// layerEdge is layerFinding for a missing edge: ly must depend on one of
// deps.
func (l *linter) layerEdge(rule Rule, ly *lintLayer, deps []string, format string, args ...any) {
	l.add(Finding{Rule: rule, Layer: ly.Name, File: ly.File, Line: ly.Line, Message: fmt.Sprintf(format, args...), DependOn: deps})
}

func (l *linter) graphFinding(err error, more string) {
	var le *layering.LayerError
	if errors.As(err, &le) {
		l.add(Finding{Rule: RuleGraph, Layer: le.Layer, File: le.File, Line: le.Line, Message: le.Err.Error() + more})
		return
	}
	var fe *layering.FileError
	if errors.As(err, &fe) {
		l.add(Finding{Rule: RuleGraph, File: fe.Path, Line: fe.Line, Message: fe.Err.Error()})
		return
	}
	l.add(Finding{Rule: RuleGraph, File: l.p.File, Message: err.Error()})
}

// unreadLayers says which layers lint could not read, which may hold a
// Kustomization a layer depends on: "" when it read every one.
func (l *linter) unreadLayers() string {
	var names []string
	for _, ly := range l.layers {
		if !ly.unknown {
			continue
		}
		why := "does not build, in Flux either"
		switch {
		case ly.remote != "":
			why = "names a remote resource lint does not fetch"
		case ly.Source == nil:
			why = "its source is not read offline"
		}
		names = append(names, fmt.Sprintf("%q (%s)", ly.Name, why))
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(", unless a layer lint could not read makes it: %s", strings.Join(names, ", "))
}

// load builds every layer's manifests, in parallel.
func (l *linter) load(ctx context.Context) error {
	l.byName = map[string]*lintLayer{}
	for i := range l.p.Layers {
		ly := &lintLayer{Layer: &l.p.Layers[i], Input: &l.inputs[i], index: i}
		l.layers = append(l.layers, ly)
		if _, dup := l.byName[ly.Name]; !dup {
			l.byName[ly.Name] = ly
		}
		if ly.HelmRelease != nil {
			o, err := emittedObject(ly.HelmRelease, ly.File, ly.Line)
			if err != nil {
				return err
			}
			ly.objects = []*object{o}
		}
	}
	// One build a core, and one more: kustomize builds one at a time
	// (fluxbuild's lock), and a build waiting for its turn would leave
	// its core idle.
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+1)
	var wg sync.WaitGroup
	for _, ly := range l.layers {
		if ly.HelmRelease != nil {
			continue
		}
		if ly.Source == nil {
			ly.unknown = true
			continue
		}
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return err
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if ly.Built { // read by fluxrepo: only taken, on every core too
				l.take(ly, ly.Objects, ly.BuildErr)
				return
			}
			objs, err := fluxbuild.Build(ctx, *ly.Source, ly.Kustomization)
			l.take(ly, objs, err)
		})
	}
	wg.Wait()
	return ctx.Err()
}

// take gives ly the objects fluxbuild built for it, or reports why it
// could not.
func (l *linter) take(ly *lintLayer, objs []*fluxbuild.Object, err error) {
	if err != nil {
		ly.unknown = true
		if errors.Is(err, fluxbuild.ErrRemote) && (!l.cfg.noRemoteBases || errors.Is(err, fluxbuild.ErrRemoteFile)) {
			// kustomize-controller fetches it: not a failure, a gap.
			ly.remote = err.Error()
			return
		}
		f := Finding{Rule: RulePath, Layer: ly.Name, File: ly.File, Line: ly.Line}
		var fe *layering.FileError
		if errors.As(err, &fe) {
			f.File, f.Line = l.rel(absPath(fe.Path)), fe.Line
			if ly.File != "" {
				f.LayerFile, f.LayerLine = ly.File, ly.Line
			}
			err = fe.Err
		}
		f.Message = l.relMessage(ly, err.Error())
		if l.cfg.repository && l.cfg.inferredRoot && errors.Is(err, fs.ErrNotExist) {
			if _, gitErr := os.Lstat(filepath.Join(l.root, ".git")); gitErr != nil {
				f.Message += fmt.Sprintf(" (paths are read from the repository's root, taken to be %s as no .git is at or above the entry point: give the root with --root)", l.root)
			}
		}
		l.add(f)
		return
	}
	ly.objects = make([]*object, len(objs))
	dir := l.sourceDir(ly)
	var vars map[string]string
	all := false // no postBuild: nothing is substituted
	if pb := ly.Kustomization.Spec.PostBuild; pb != nil {
		vars, all = pb.Substitute, len(pb.SubstituteFrom) == 0
	}
	for i, o := range objs {
		c := *o // the caller's objects stay as they are
		c.File = l.inSource(dir, o.File)
		ly.objects[i] = l.cfg.objects.read(o, &c)
		ly.objects[i].nameAsApplied(vars, all)
	}
}

// relMessage is a build error's message with the absolute paths of ly's
// source (a folder of the repository, or where lint laid out an artifact)
// and of the repository's root written relative to them, as findings name
// files: "lstat flux-modules/x/release.yaml", not a temporary folder.
func (l *linter) relMessage(ly *lintLayer, msg string) string {
	var dirs []string
	if ly.Source != nil && ly.Source.Dir != "" {
		dirs = append(dirs, absPath(ly.Source.Dir))
	}
	dirs = append(dirs, l.root)
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) }) // the deepest first
	for _, d := range dirs {
		if d != "" && d != string(filepath.Separator) {
			msg = strings.ReplaceAll(msg, d+string(filepath.Separator), "")
		}
	}
	return msg
}

// sourceDir is the directory ly's object files are relative to, when it
// is not the lint root: its source's, absolute; "" otherwise.
func (l *linter) sourceDir(ly *lintLayer) string {
	if ly.Source == nil {
		return ""
	}
	dir, err := filepath.Abs(ly.Source.Dir)
	if err != nil || dir == l.root {
		return ""
	}
	return dir
}

// inSource names an object's file, relative to dir (sourceDir), as
// findings do: relative to the lint root when under it.
func (l *linter) inSource(dir, file string) string {
	if file == "" || dir == "" {
		return file
	}
	return l.rel(filepath.Join(dir, filepath.FromSlash(file)))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// emittedObject is the object a Plan emits for a layer (its HelmRelease),
// as lint reads objects.
func emittedObject(obj any, file string, line int) (*object, error) {
	data, err := sigyaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	n := doc.Content[0]
	return lintObject(&fluxbuild.Object{
		APIVersion: yamlutil.Str(n, "apiVersion"), Kind: yamlutil.Str(n, "kind"),
		Namespace: yamlutil.Str(n, "metadata", "namespace"), Name: yamlutil.Str(n, "metadata", "name"),
		File: file, Line: line, Node: n, Built: true, Dollar: true,
	}), nil
}

// index computes ancestors and where CRDs and namespaces come from.
func (l *linter) index() {
	for _, ly := range l.layers {
		ly.direct = map[string]bool{}
		for _, d := range ly.DependsOn {
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
		ly.webhooks = map[string]bool{}
		ly.release = ly.HelmRelease != nil
		for _, o := range ly.objects {
			for _, k := range o.webhooks {
				ly.webhooks[k] = true
			}
			for _, k := range o.assumed {
				if ly.assumed == nil {
					ly.assumed = map[string]*object{}
				}
				if _, seen := ly.assumed[k]; !seen {
					ly.assumed[k] = o
				}
			}
			if o.helmCRDs != "" {
				ly.release = true
				if !o.rendered {
					ly.hiddenChart = true
					if o.chartErr == nil || errors.Is(o.chartErr, charts.ErrUnavailable) {
						ly.missingChart = true
					}
				}
				// A chart lint rendered installs the CRDs that follow it
				// in the layer; one it could not render may install any.
				if !o.rendered && o.helmCRDs != "Skip" {
					ly.unrendered = append(ly.unrendered, o)
				}
				if ns := yamlutil.Str(o.Node, "spec", "targetNamespace"); ns != "" && yamlutil.Str(o.Node, "spec", "install", "createNamespace") == "true" &&
					!slices.Contains(l.namespaces[ns], ly.Name) {
					l.namespaces[ns] = append(l.namespaces[ns], ly.Name)
				}
			}
			if o.crd != nil {
				gk := o.crd.group + "/" + o.crd.kind
				l.crds[gk] = append(l.crds[gk], crdDef{layer: ly.Name, obj: o})
				l.scope[gk] = o.crd.scope
			}
			if o.Kind == "Namespace" && o.APIVersion == "v1" && !slices.Contains(l.namespaces[o.Name], ly.Name) {
				l.namespaces[o.Name] = append(l.namespaces[o.Name], ly.Name)
			}
			if o.makesIn != nil {
				l.clusterSecrets = append(l.clusterSecrets, layerObject{layer: ly.Name, obj: o})
			}
		}
		// What the table of known operators assumes is served only where
		// no webhook configuration the layer applies says so for certain.
		for k := range ly.assumed {
			if ly.webhooks[k] {
				delete(ly.assumed, k)
				continue
			}
			ly.webhooks[k] = true
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
// or not: that layer is Ready before ly reconciles.
func (l *linter) isAncestor(ly *lintLayer, name string) bool {
	a, ok := l.byName[name]
	return ok && ly.ancestors.has(a.index)
}

// isReadyBefore reports whether the layer named name is Ready before ly's
// objects are applied: an ancestor of ly, or of a layer that applies ly's
// Kustomization, directly or not (that layer reconciles, and applies the
// Kustomizations of its children, only once its dependsOn are Ready).
func (l *linter) isReadyBefore(ly *lintLayer, name string) bool {
	a, ok := l.byName[name]
	return ok && ly.readyBefore.has(a.index)
}

// isApplied reports whether the objects of the layer named name exist
// before ly reconciles: it is an ancestor, or applies ly (or an ancestor).
func (l *linter) isApplied(ly *lintLayer, name string) bool {
	a, ok := l.byName[name]
	return ok && ly.applied.has(a.index)
}

// isBelow reports whether ly is applied by above: its Kustomization is
// one above's layer applies, or one a layer below above applies.
func (l *linter) isBelow(ly, above *lintLayer) bool {
	seen := map[string]bool{}
	for p := ly.Parent; p != "" && !seen[p]; {
		if p == above.Name {
			return true
		}
		seen[p] = true
		next, ok := l.byName[p]
		if !ok {
			return false
		}
		p = next.Parent
	}
	return false
}

// closure returns, for every layer, the layers reachable from it by
// edges (names of other layers), itself left out: in one walk, each
// layer's set is the union of its neighbours' sets, when the graph has no
// cycle (a cycle is a graph finding already); with one, each layer walks
// the graph on its own, which is quadratic but only for a platform that
// cannot become Ready.
func (l *linter) closure(edges func(*lintLayer) iter.Seq[int]) []layerSet {
	words := (len(l.layers) + 63) / 64
	sets := make([]layerSet, len(l.layers))
	for i := range sets {
		sets[i] = make(layerSet, words)
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
		for d := range edges(ly) {
			dep := l.layers[d]
			switch state[dep.index] {
			case unseen:
				visit(dep)
			case visiting:
				cyclic = true
				continue
			}
			sets[ly.index].union(sets[dep.index])
			sets[ly.index].add(dep.index)
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
			l.walk(ly, edges, sets[ly.index])
		}
		// A layer is not its own ancestor, by name: with duplicate names
		// or a cycle, a graph finding already.
		self := l.byName[ly.Name].index
		sets[ly.index][self/64] &^= 1 << (self % 64)
	}
	return sets
}

// indexes yields the indexes of the layers named.
func (l *linter) indexes(names []string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, n := range names {
			if !yield(l.byName[n].index) {
				return
			}
		}
	}
}

// walk sets set to the layers reachable from ly, walking the graph.
func (l *linter) walk(ly *lintLayer, edges func(*lintLayer) iter.Seq[int], set layerSet) {
	clear(set)
	stack := slices.Collect(edges(ly))
	for len(stack) > 0 {
		a := l.layers[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if set.has(a.index) {
			continue
		}
		set.add(a.index)
		stack = slices.AppendSeq(stack, edges(a))
	}
}

// ancestors sets every layer's ancestors (the layers Ready before it:
// dependsOn, transitively, and what a Ready ancestor's wait implies) and
// the layers applied before it (those, and the layer that applies its
// Kustomization, transitively: a layer's objects exist before the
// Kustomizations it applies reconcile, though they may not be Ready).
//
// A layer with wait: true is Ready only once every object it applies is
// healthy, and kustomize-controller assesses a Kustomization (or a
// HelmRelease) it applies by its Ready condition, as kstatus does: so its
// children are Ready before it is, and before whatever depends on it.
func (l *linter) ancestors() {
	deps := func(ly *lintLayer) []string { return sortedKeys(ly.direct) }
	children := map[string][]string{}
	for _, ly := range l.layers {
		if p, ok := l.byName[ly.Parent]; ok && p != ly && p.Kustomization.Spec.Wait {
			children[p.Name] = append(children[p.Name], ly.Name)
		}
	}
	// readyImplies: the layers that are Ready once ly is.
	readyImplies := func(ly *lintLayer) iter.Seq[int] { return l.indexes(append(deps(ly), children[ly.Name]...)) }
	ready := l.closure(readyImplies)
	suspended := l.suspendedRoots()
	for _, ly := range l.layers {
		set := make(layerSet, len(ready[ly.index]))
		for _, d := range deps(ly) {
			dep := l.byName[d]
			set.add(dep.index)
			set.union(ready[dep.index])
		}
		if root, ok := suspended[ly.index]; ok {
			// Flux applies nothing under a suspended Kustomization until
			// it is resumed, by which time the rest of the platform is
			// there: only the layers resumed with it can race it.
			for _, other := range l.layers {
				if r, in := suspended[other.index]; !in || r != root {
					set.add(other.index)
				}
			}
		}
		// A layer is not its own ancestor, by name: with duplicate names
		// or a cycle, a graph finding already.
		self := l.byName[ly.Name].index
		set[self/64] &^= 1 << (self % 64)
		ly.ancestors = set
	}
	for _, ly := range l.layers {
		ly.readyBefore = slices.Clone(ly.ancestors)
		seen := map[*lintLayer]bool{ly: true}
		for p := l.byName[ly.Parent]; p != nil && !seen[p]; p = l.byName[p.Parent] {
			seen[p] = true
			ly.readyBefore.union(p.ancestors)
		}
		self := l.byName[ly.Name].index
		ly.readyBefore[self/64] &^= 1 << (self % 64)
	}
	// Applied before ly: its ancestors, its parent, and what is applied
	// before either.
	withParent := func(ly *lintLayer) iter.Seq[int] {
		return func(yield func(int) bool) {
			for a := range ly.ancestors.all {
				if !yield(a) {
					return
				}
			}
			if p, ok := l.byName[ly.Parent]; ok && p != ly {
				yield(p.index)
			}
		}
	}
	for i, set := range l.closure(withParent) {
		l.layers[i].applied = set
	}
}

// suspendedRoots maps every layer that Flux does not reconcile yet to the
// suspended Kustomization above it: a layer with spec.suspend, and the
// layers it applies, transitively (their Kustomizations are never created
// while it is suspended): an opt-in part of a platform, resumed later.
func (l *linter) suspendedRoots() map[int]int {
	out := map[int]int{}
	for _, ly := range l.layers {
		seen := map[int]bool{}
		for x := ly; x != nil && !seen[x.index]; x = l.byName[x.Parent] {
			seen[x.index] = true
			if x.Kustomization.Spec.Suspend {
				out[ly.index] = x.index // the topmost one wins: keep walking
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
