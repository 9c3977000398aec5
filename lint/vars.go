package lint

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/substitute"
)

// WithOutputsFile reads the IaC outputs of the stack's vars entry vars
// from file instead of the file the entry names, as render.WithOutputs
// does for a render. Package review gives both sides of a diff the
// working tree's outputs file with it. A vars entry the stack does not
// have is an error of Stack.
func WithOutputsFile(vars, file string) Option {
	return funcLint(func(c *config) error {
		if vars == "" || file == "" {
			return errdefs.Kind(ErrInvalidOption, "outputs file %q of vars entry %q: both are required", file, vars)
		}
		if c.outputs == nil {
			c.outputs = map[string]string{}
		}
		c.outputs[vars] = file
		return nil
	})
}

// varsValues are a vars entry's IaC outputs as lint knows them, read once
// per Lint.
type varsValues struct {
	values    map[string]string // plain outputs: the ConfigMap's data
	sensitive []string          // sensitive outputs: the Secret's keys
	known     bool              // the outputs were read
}

// readVars reads the IaC outputs of every vars entry; an entry whose file
// cannot be read is a finding, and its variables are unknown.
func (l *linter) readVars() map[string]*varsValues {
	out := map[string]*varsValues{}
	for _, v := range l.p.Vars {
		sv := &varsValues{}
		out[v.Name] = sv
		if v.Outputs == "" {
			continue
		}
		path := v.Outputs
		if l.p.Dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(l.p.Dir, filepath.FromSlash(path))
		}
		if f, ok := l.cfg.outputs[v.Name]; ok {
			path = f
		}
		outs, err := outputs.Read(path)
		if err != nil {
			l.add(Finding{Rule: RuleVariables, File: v.File, Line: v.Line, Message: fmt.Sprintf("vars %q: %v", v.Name, err)})
			continue
		}
		sv.known, sv.values = true, map[string]string{}
		for _, o := range outs.List {
			if o.Sensitive {
				sv.sensitive = append(sv.sensitive, o.Var)
			} else {
				sv.values[o.Var] = o.Value
			}
		}
	}
	return out
}

// source is a substituteFrom source a layer of the platform creates.
type source struct {
	layer string
	keys  []string
	open  bool // it may have more keys than lint knows
}

// checkVariables checks every layer's ${var} uses against the variables
// its postBuild makes available, with package substitute's checks
// (RuleVariables); reports substituteFrom sources that nothing creates or
// that a layer this one does not depend on creates (RuleSubstituteFrom);
// and ${var} uses of the platform's variables in a layer without postBuild,
// which Flux applies as written (RuleNoPostBuild): those some layer's
// postBuild provides, and those other layers' postBuild substitute, whatever
// provides them (a ConfigMap lint cannot read).
func (l *linter) checkVariables(ctx context.Context) error {
	// substituteFrom sources the platform's own layers create, by
	// Kind/namespace/name.
	sources := map[string][]source{}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if (o.Kind == "ConfigMap" || o.Kind == "Secret") && o.APIVersion == "v1" {
				ns := o.Namespace
				if ns == "" {
					ns = ly.Kustomization.Spec.TargetNamespace
				}
				k := o.Kind + "/" + ns + "/" + o.Name
				sources[k] = append(sources[k], source{layer: ly.Name, keys: o.data})
			}
			if o.makesSecret != "" && o.makesIn == nil { // a ClusterExternalSecret's: clusterSecretMakers
				ns := o.Namespace
				if ns == "" {
					ns = ly.Kustomization.Spec.TargetNamespace
				}
				k := "Secret/" + ns + "/" + o.makesSecret
				sources[k] = append(sources[k], source{layer: ly.Name, keys: o.makesKeys, open: o.makesOpen})
			}
			if o.makesConfigMap != "" {
				ns := o.Namespace
				if ns == "" {
					ns = ly.Kustomization.Spec.TargetNamespace
				}
				k := "ConfigMap/" + ns + "/" + o.makesConfigMap
				sources[k] = append(sources[k], source{layer: ly.Name, keys: o.makesConfigMapKeys})
			}
		}
	}
	vars := l.readVars()
	platformVars := map[string]bool{} // every variable some layer's postBuild provides
	// The variables of each layer, in order (with the findings about its
	// sources); then the layers' documents, checked on every core; then
	// the findings, in the order of the layers.
	type check struct {
		ly       *lintLayer
		avail    avail
		post     bool // the layer has spec.postBuild
		findings []substitute.Finding
		vars     []string // the variables its postBuild substitutes in it
	}
	var checks, noPostBuild []*check
	l.missingFrom = map[string][]*lintLayer{}
	defer l.reportMissingSources()
	for _, ly := range l.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		pb := ly.Kustomization.Spec.PostBuild
		if pb == nil {
			noPostBuild = append(noPostBuild, &check{ly: ly})
			continue
		}
		avail := l.available(ly, pb, sources, vars)
		if err := ctx.Err(); err != nil {
			return err
		}
		for k := range avail.Values {
			platformVars[k] = true
		}
		for _, k := range avail.Names {
			platformVars[k] = true
		}
		if ly.unknown {
			continue
		}
		checks = append(checks, &check{ly: ly, avail: avail, post: true})
	}
	parallel.For(len(checks), func(i int) {
		c := checks[i]
		docs := docsOf(c.ly, c.post)
		c.findings = substitute.CheckDocs(docs, c.avail.Available)
		if c.avail.substitutes() {
			c.vars = slices.DeleteFunc(varsOf(docs), func(v string) bool { return fails(c.findings, c.avail, v) })
		}
	})
	// The variables the layers with postBuild substitute, and in which
	// layers: a variable of the platform by its use, whatever provides it
	// (a ConfigMap Terraform makes, say, which lint cannot read). A use
	// Flux fails on is no such sign: that layer substitutes nothing, and
	// the text may be meant for another tool (a Grafana dashboard's
	// ${DS_PROMETHEUS}), as the layers without postBuild apply it.
	substitutedIn := map[string][]*lintLayer{}
	for _, c := range checks {
		for _, v := range c.vars {
			substitutedIn[v] = append(substitutedIn[v], c.ly)
		}
	}
	var bare []*check // the layers without postBuild that are checked
	if len(platformVars) > 0 || len(substitutedIn) > 0 {
		for _, c := range noPostBuild {
			if !c.ly.unknown {
				bare = append(bare, c)
			}
		}
	}
	parallel.For(len(bare), func(i int) {
		c := bare[i]
		c.findings = substitute.CheckDocs(docsOf(c.ly, false), c.avail.Available)
	})
	// A mutating webhook on Kustomizations may add to any layer's
	// postBuild.substitute (kustomize-mutating-webhook adds every key of
	// its ConfigMaps and Secrets to every Kustomization): a variable no
	// source lint reads provides may come from it; one hint says so.
	mutator, mutatorLayer := l.kustomizationMutator()
	var mutated []*lintLayer // layers whose uses the mutator may substitute
	for _, c := range checks {
		ly, avail := c.ly, c.avail
		for _, sf := range c.findings {
			if sf.Severity == substitute.SeverityHint {
				continue
			}
			if excused(sf, avail) {
				continue // it may be a key of a source lint cannot see into
			}
			if mutator != nil && sf.Unset {
				if !slices.Contains(mutated, ly) {
					mutated = append(mutated, ly)
				}
				continue
			}
			f := Finding{Rule: RuleVariables, Layer: ly.Name, Object: sf.Object, File: sf.File, Line: sf.Line, Message: sf.Message}
			if sf.Severity == substitute.SeverityWarning {
				f.Severity = SeverityWarning
			}
			if f.File == "" {
				f.File, f.Line = ly.File, ly.Line
			} else if ly.File != "" {
				f.LayerFile, f.LayerLine = ly.File, ly.Line
			}
			l.add(f)
		}
	}
	for _, c := range bare {
		ly := c.ly
		for _, sf := range c.findings {
			var msg string
			switch users := substitutedIn[sf.Var]; {
			case sf.Var == "":
				continue
			case platformVars[sf.Var]:
				msg = fmt.Sprintf("${%s} is a variable of the platform, but this layer has no spec.postBuild: Flux applies the text ${%s} as written; add postBuild (substituteFrom the variables' source), or, if the text is meant as written, suppress this finding in %s",
					sf.Var, sf.Var, ConfigFile)
			case len(users) > 0:
				msg = fmt.Sprintf("${%s} is substituted by the postBuild of %s, but this layer has no spec.postBuild: Flux applies the text ${%s} as written; add postBuild%s, or, if the text is meant as written, suppress this finding in %s",
					sf.Var, layerList(users), sf.Var, sourcesOf(users[0]), ConfigFile)
			default:
				continue
			}
			if mutator != nil {
				// The webhook may give the layer its postBuild: the
				// cluster decides; one hint says so, below.
				if !slices.Contains(mutated, ly) {
					mutated = append(mutated, ly)
				}
				continue
			}
			f := Finding{Rule: RuleNoPostBuild, Layer: ly.Name, Object: sf.Object, File: sf.File, Line: sf.Line, Message: msg}
			if ly.File != "" {
				f.LayerFile, f.LayerLine = ly.File, ly.Line
			}
			l.add(f)
		}
	}
	if len(mutated) > 0 {
		slices.SortFunc(mutated, func(a, b *lintLayer) int { return a.index - b.index })
		f := Finding{Rule: RuleNoPostBuild, Severity: SeverityHint, Layer: mutatorLayer.Name, Object: mutator.ref(), File: mutator.File, Line: mutator.Line,
			Message: fmt.Sprintf("a mutating webhook on Kustomizations, which may add to the spec.postBuild of %s the variables %s and nothing lint reads provides: those uses are not reported (variables, no-postbuild), as only the cluster knows what the webhook adds",
				layerList(mutated), plural(len(mutated), "it uses", "they use"))}
		if mutatorLayer.File != "" {
			f.LayerFile, f.LayerLine = mutatorLayer.File, mutatorLayer.Line
		}
		l.add(f)
	}
	return nil
}

// kustomizationMutator returns the object of the tree that runs a mutating
// admission webhook on Flux Kustomizations, which may add spec.postBuild
// to any of them, and its layer: a MutatingWebhookConfiguration whose
// rules take kustomizations, or a HelmRelease of the
// kustomize-mutating-webhook chart (which adds spec.postBuild.substitute,
// from ConfigMaps and Secrets of its own, to every Kustomization); nil when
// none does.
func (l *linter) kustomizationMutator() (*object, *lintLayer) {
	group := kustomizev1.GroupVersion.Group
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			mutates := false
			switch {
			case o.Kind == "MutatingWebhookConfiguration":
				mutates = slices.Contains(o.webhooks, webhookKey(group, "kustomizations")) || slices.Contains(o.webhooks, webhookKey(group, "*"))
			case o.Kind == "HelmRelease" && strings.HasPrefix(o.APIVersion, "helm.toolkit.fluxcd.io/"):
				mutates = l.chartName(o) == kustomizeMutatingWebhook
			}
			if mutates {
				return o, ly
			}
		}
	}
	return nil, nil
}

// kustomizeMutatingWebhook is the chart of xunholy's
// fluxcd-kustomize-mutating-webhook, which home-ops repositories run to
// give every Kustomization the cluster's variables.
const kustomizeMutatingWebhook = "kustomize-mutating-webhook"

// layerList names layers in a message: up to three, and how many more.
func layerList(ls []*lintLayer) string {
	var names []string
	for _, l := range ls[:min(len(ls), 3)] {
		names = append(names, l.Name)
	}
	out := "layer " + strings.Join(quoted(names), ", ")
	if len(ls) > 1 {
		out = "layers " + strings.Join(quoted(names), ", ")
	}
	if len(ls) > 3 {
		out += fmt.Sprintf(" and %d more", len(ls)-3)
	}
	return out
}

// sourcesOf says where ly's postBuild takes its variables from, for
// advice: " (substituteFrom ConfigMap/cluster-vars, as layer "x" does)",
// or "" when it has only inline ones.
func sourcesOf(ly *lintLayer) string {
	var refs []string
	for _, r := range ly.Kustomization.Spec.PostBuild.SubstituteFrom {
		refs = append(refs, r.Kind+"/"+r.Name)
	}
	if len(refs) == 0 {
		return fmt.Sprintf(" (substitute, as layer %q does)", ly.Name)
	}
	return fmt.Sprintf(" (substituteFrom %s, as layer %q does)", strings.Join(refs, ", "), ly.Name)
}

// varsOf returns the variables the documents use, each once.
func varsOf(docs []substitute.Doc) []string {
	seen := map[string]bool{}
	for _, d := range docs {
		u := d.Uses
		if u == nil {
			u = substitute.FindUses(d.Node)
		}
		for _, v := range u.Vars() {
			seen[v] = true
		}
	}
	return sortedKeys(seen)
}

// excused reports whether sf, an error about a variable, may not be one:
// the variable may be a key of a substituteFrom source lint cannot see
// into.
func excused(sf substitute.Finding, a avail) bool {
	return a.open && sf.Severity == substitute.SeverityError && sf.Var != "" && !a.has(sf.Var)
}

// fails reports whether Flux fails the layer on a use of the variable v
// (findings are its uses' findings, a what its postBuild provides).
func fails(findings []substitute.Finding, a avail, v string) bool {
	return slices.ContainsFunc(findings, func(sf substitute.Finding) bool {
		return sf.Var == v && sf.Severity == substitute.SeverityError && !excused(sf, a)
	})
}

// substitutes reports whether Flux substitutes with what the postBuild
// provides: it has variables (known or not), or substituteStrategy
// Always.
func (a avail) substitutes() bool {
	return a.open || a.Always || len(a.Values) > 0 || len(a.Names) > 0
}

// avail is what a layer's postBuild provides.
type avail struct {
	substitute.Available
	// open: some substituteFrom source's keys cannot be known here (made
	// outside the platform, or a vars entry without an outputs file), so a
	// variable nothing is known to provide may come from it.
	open bool
}

func (a avail) has(name string) bool {
	_, ok := a.Values[name]
	return ok || slices.Contains(a.Names, name)
}

// available works out what ly's postBuild provides, and reports its
// substituteFrom sources that nothing creates or that race it.
func (l *linter) available(ly *lintLayer, pb *kustomizev1.PostBuild, sources map[string][]source, vars map[string]*varsValues) avail {
	a := avail{Available: substitute.Available{Values: map[string]string{}, Always: pb.SubstituteStrategy == kustomizev1.SubstituteStrategyAlways}}
	names := map[string]bool{}
	ns := ly.Kustomization.Namespace
	for _, ref := range pb.SubstituteFrom {
		if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
			continue // Flux skips other kinds
		}
		key := ref.Kind + "/" + ns + "/" + ref.Name
		srcs, assumed := sources[key], ""
		if ref.Kind == "Secret" {
			for _, m := range l.clusterSecretMakers(ns, ref.Name) {
				srcs = append(slices.Clip(srcs), m.source)
				if m.assumed != "" && assumed == "" {
					assumed = fmt.Sprintf(" (assumed: %s selects namespaces by labels, and lint does not know those of %s)", m.assumed, ns)
				}
			}
		}
		if len(srcs) > 0 {
			var makers []string
			self := false
			for _, s := range srcs {
				if l.isApplied(ly, s.layer) {
					makers, self = nil, false
					break
				}
				if s.layer == ly.Name {
					self = true
					continue
				}
				makers = append(makers, s.layer)
			}
			switch {
			case ref.Optional:
			case l.isExternal(ref.Kind, ns, ref.Name):
				// It exists before Flux (the bootstrap step makes it, or
				// it is declared): the first reconcile reads it.
			case self:
				l.layerFinding(RuleSubstituteFrom, ly, "substituteFrom %s is created by this same layer%s: Flux reads the variables before it applies anything of the layer, so it never applies and never creates it (every reconcile fails); move it to a layer this one depends on", key, assumed)
			case len(makers) > 0:
				switch m := l.byName[makers[0]]; {
				case m != nil && l.isBelow(m, ly):
					l.layerFinding(RuleSubstituteFrom, ly, "substituteFrom %s is created by layer %q%s, which this layer applies: Flux reads the variables before it applies anything of this layer, so %q is never applied and never creates it (every reconcile fails; depending on it cannot help); move it to a layer this one depends on", key, makers[0], assumed, makers[0])
				case m != nil && m.applied.has(ly.index):
					l.layerFinding(RuleSubstituteFrom, ly, "substituteFrom %s is created by layer %q%s, which waits for this layer: this layer fails until it exists and %q waits for this one to be Ready, so neither ever is (depending on it would make a cycle); move it to a layer both can depend on", key, makers[0], assumed, makers[0])
				default:
					l.layerEdge(RuleSubstituteFrom, ly, makers, "substituteFrom %s is created by layer %q%s, which this layer does not depend on: Flux fails the layer until it exists; depend on %q", key, makers[0], assumed, makers[0])
				}
			}
			for _, s := range srcs {
				for _, k := range s.keys {
					names[k] = true
				}
				a.open = a.open || s.open
			}
			continue
		}
		sv, isVars := vars[ref.Name]
		switch {
		case isVars && sv.known && ref.Kind == "ConfigMap":
			maps.Copy(a.Values, sv.values)
		case isVars && sv.known:
			for _, k := range sv.sensitive {
				names[k] = true
			}
		case isVars, l.isExternal(ref.Kind, ns, ref.Name):
			a.open = true
		case ref.Optional:
			a.open = true
		case ly.unknown || l.unknownAncestor(ly):
			a.open = true // it may come from a layer lint could not read, applied before this one: Coverage says so
		default:
			a.open = true
			if l.missingFrom[key] == nil {
				l.missingOrder = append(l.missingOrder, key)
			}
			l.missingFrom[key] = append(l.missingFrom[key], ly)
		}
	}
	maps.Copy(a.Values, pb.Substitute)
	for k := range names {
		if _, ok := a.Values[k]; !ok {
			a.Names = append(a.Names, k)
		}
	}
	slices.Sort(a.Names)
	return a
}

// reportMissingSources reports each substituteFrom source that no layer
// applied before its users creates once, at its first user, naming the
// others: one ConfigMap a tool outside Flux makes is one finding, however
// many layers read it.
func (l *linter) reportMissingSources() {
	for _, key := range l.missingOrder {
		users := l.missingFrom[key]
		others := ""
		if len(users) > 1 {
			var names []string
			for _, u := range users[1:] {
				names = append(names, u.Name)
			}
			others = fmt.Sprintf(" (nor before the %d other layers that read it: %s)", len(names), strings.Join(quoted(names), ", "))
		}
		maybe := ""
		if l.anyUnknown() {
			maybe = "; layers lint could not read may create it, but none of them is applied before, so that would race too"
		}
		declare := "the stack's vars"
		if l.cfg.repository {
			declare = "external: in " + ConfigFile
		}
		l.layerFinding(RuleSubstituteFrom, users[0], "substituteFrom %s: no layer applied before this one creates it%s and it is not declared as made outside the platform%s: Flux fails the layer until it exists. If Terraform (or another tool) creates it, declare it (--external %s, or %s); otherwise mark it optional: true", key, others, maybe, key, declare)
	}
}

// anyUnknown reports whether some layer's objects could not be read.
func (l *linter) anyUnknown() bool {
	return slices.ContainsFunc(l.layers, func(ly *lintLayer) bool { return ly.unknown })
}

// docsOf is what package substitute checks of a layer: its objects, as
// kustomize-controller substitutes them; for a layer without postBuild
// (post false), the uses that stay as written, leaving out those in the
// patches of a Kustomization that substitutes them itself (ownUses).
func docsOf(ly *lintLayer, post bool) []substitute.Doc {
	docs := make([]substitute.Doc, 0, len(ly.objects))
	for _, o := range ly.objects {
		if !o.Dollar {
			continue
		}
		d := substitute.Doc{Path: o.File, Node: o.Node, Uses: o.uses}
		if !post && o.ownUses != nil {
			d.Node, d.Uses = nil, o.ownUses
		}
		if o.Built && !o.ScalarLines {
			d.Line = max(o.Line, 1) // its lines are not the file's
		}
		docs = append(docs, d)
	}
	return docs
}
