package lint

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// Merge is what a RuleMerge hint proposes: layers that can be one
// Kustomization with no race, because kustomize-controller orders their
// objects within one apply as well as their dependsOn edges did.
type Merge struct {
	// Layers are the layers to merge, each after the layers it depends on.
	// The last is the one the others merge into: the layer their
	// dependents wait for, whose name, dependsOn and readiness (wait,
	// health checks) the merged Kustomization keeps.
	Layers []string `json:"layers"`
	// Edges counts the dependsOn edges among Layers that the merge
	// removes. CriticalEdges is how much shorter, in dependsOn edges, the
	// merge makes the Plan's critical path (Plan.CriticalPath, the longest
	// chain of edges; 0 when another chain is as long): in stock Flux each
	// costs up to --requeue-dependency (layering.DefaultRequeueDependency) of the
	// bootstrap.
	Edges         int `json:"edges"`
	CriticalEdges int `json:"criticalEdges"`
	// Why says why the layers need no dependsOn among them: what each
	// holds, and that none has what would keep an edge.
	Why string `json:"why"`
	// Steps say how to merge them: the Kustomization to keep and its path,
	// dependsOn, prune and deletion, intervals, the dependents' dependsOn.
	Steps []string `json:"steps"`
	// Saving says what the merge saves, in stock Flux and with wake.
	Saving string `json:"saving"`
}

// Into is the layer the others merge into: the last of Layers.
func (m Merge) Into() string { return m.Layers[len(m.Layers)-1] }

// Why merging is safe, read from the controllers' code (kustomize-controller
// v1.9.5, fluxcd/pkg/ssa v0.76.2 that it uses; ssa v0.83.0 is the same):
//
//   - (*KustomizationReconciler).apply (internal/controller/
//     kustomization_controller.go) applies a layer's objects with
//     ssa's (*ResourceManager).ApplyAllStaged (manager_apply.go), which
//     applies the cluster definitions first (utils.IsClusterDefinition:
//     CustomResourceDefinitions, Namespaces, ClusterRoles) and waits with
//     WaitForSet until they are ready, CRDs established; then Class
//     definitions (kinds ending in Class), waited for too; then everything
//     else. So a layer of CRDs or Namespaces needs no edge to the custom
//     resources or namespaced objects that follow it: in one Kustomization
//     they are applied first all the same. Nothing in that order waits for a
//     webhook's workload, an operator, a HelmRelease's chart or a health
//     check: those keep their edge.
//   - A Kustomization whose dependencies are not Ready returns
//     ctrl.Result{RequeueAfter: r.DependencyRequeueInterval} from Reconcile
//     and is looked at again only then (--requeue-dependency, 30s by
//     default, main.go): kustomize-controller does not watch its
//     dependencies. Each edge of the critical path costs up to that much.
//   - prune and finalize both delete through deleteObjects, whose
//     exclusions skip every object labelled or annotated
//     kustomize.toolkit.fluxcd.io/prune: disabled, read from the object in
//     the cluster (ssa's (*ResourceManager).Delete, utils.AnyInMetadata):
//     with deletionPolicy MirrorPrune, that annotation on the objects of a
//     prune: false layer keeps them exactly as prune: false did, inside a
//     prune: true Kustomization.

// pruning is what kustomize-controller does with a Kustomization's objects
// when they leave the source (prune) and when the Kustomization is deleted
// (finalizerShouldDeleteResources: deletionPolicy, MirrorPrune following
// prune). The zero value keeps them either way.
type pruning struct {
	prune    bool
	onDelete string // "", Delete or WaitForTermination
}

func pruningOf(k *kustomizev1.Kustomization) pruning {
	p := pruning{prune: k.Spec.Prune}
	switch d := k.GetDeletionPolicy(); d {
	case kustomizev1.DeletionPolicyMirrorPrune:
		if k.Spec.Prune {
			p.onDelete = kustomizev1.DeletionPolicyDelete
		}
	case kustomizev1.DeletionPolicyDelete, kustomizev1.DeletionPolicyWaitForTermination:
		p.onDelete = d
	}
	return p
}

// mergeInfo is what the merge hint needs to know of a layer, computed once.
type mergeInfo struct {
	canTake  bool            // others may merge into it
	canJoin  bool            // it may merge into another layer
	specKey  string          // the spec, less the fields a merge may reconcile
	slow     bool            // some object is not ready as soon as it is applied
	defOnly  bool            // only cluster definitions (applied first)
	kinds    []string        // its objects' kinds, in order of first appearance
	ids      map[string]bool // its objects, by group/kind/namespace/name
	late     map[string]bool // API groups of objects applied after the cluster definitions
	sources  map[string]bool // Kind/namespace/name of the substituteFrom sources it makes
	dollar   bool            // some object may hold a ${var}
	cuts     map[string]bool // API groups whose admission its webhooks or policies intercept ("*": all)
	guarded  bool            // some layer's dependsOn on it has a readyExpr
	applying bool            // it applies Kustomizations (or is another layer's parent)
}

// readyOnApply are the built-in kinds (group/Kind) that kstatus finds
// Current as soon as they exist: waiting for them waits for nothing.
var readyOnApply = map[string]bool{
	"/Namespace":                            true,
	"/ConfigMap":                            true,
	"/Secret":                               true,
	"/ServiceAccount":                       true,
	"/LimitRange":                           true,
	"/ResourceQuota":                        true,
	"rbac.authorization.k8s.io/Role":        true,
	"rbac.authorization.k8s.io/RoleBinding": true,
	"rbac.authorization.k8s.io/ClusterRole": true,
	"rbac.authorization.k8s.io/ClusterRoleBinding":  true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, // established before the rest is applied
	"networking.k8s.io/NetworkPolicy":               true,
	"networking.k8s.io/IngressClass":                true,
	"scheduling.k8s.io/PriorityClass":               true,
	"storage.k8s.io/StorageClass":                   true,
	"node.k8s.io/RuntimeClass":                      true,
}

// isClusterDefinition is ssa's utils.IsClusterDefinition: what
// ApplyAllStaged applies, and waits for, before anything else.
func isClusterDefinition(o *object) bool {
	switch {
	case o.Kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io",
		o.Kind == "Namespace" && o.APIVersion == "v1",
		o.Kind == "ClusterRole" && o.group() == "rbac.authorization.k8s.io":
		return true
	}
	return false
}

// mergeInfo reads what the merge hint needs of ly.
func (l *linter) mergeInfo(ly *lintLayer, parents map[string]bool) *mergeInfo {
	spec := &ly.Kustomization.Spec
	m := &mergeInfo{ids: map[string]bool{}, late: map[string]bool{}, sources: map[string]bool{}, cuts: map[string]bool{}, defOnly: true}
	m.applying = parents[ly.Name]
	serving := len(ly.webhooks) > 0
	for k := range ly.webhooks {
		g, _, _ := strings.Cut(k, "/")
		m.cuts[g] = true
	}
	seen := map[string]bool{}
	for _, o := range ly.objects {
		if !seen[o.Kind] {
			seen[o.Kind] = true
			m.kinds = append(m.kinds, o.Kind)
		}
		ns := o.Namespace
		if ns == "" && !l.isClusterScoped(o) {
			ns = spec.TargetNamespace
		}
		m.ids[o.group()+"/"+o.Kind+"/"+ns+"/"+o.Name] = true
		if !isClusterDefinition(o) {
			m.defOnly = false
			m.late[o.group()] = true
		}
		if !readyOnApply[o.group()+"/"+o.Kind] {
			m.slow = true
		}
		m.dollar = m.dollar || o.Dollar
		switch {
		case o.Kind == "Kustomization" && o.group() == kustomizev1.GroupVersion.Group:
			m.applying = true
		case o.group() == "admissionregistration.k8s.io" && strings.Contains(o.Kind, "AdmissionPolicy"):
			// In-process admission: it takes effect when the API server
			// has loaded it, whatever else is applied with it.
			serving = true
			m.cuts["*"] = true
		case o.Kind == "APIService" && o.group() == "apiregistration.k8s.io":
			serving = true // an aggregated API serves only once its backend runs
		case o.crd != nil && yamlutil.Str(o.Node, "spec", "conversion", "strategy") == "Webhook":
			serving = true // its custom resources convert only once the webhook runs
		}
		if (o.Kind == "ConfigMap" || o.Kind == "Secret") && o.APIVersion == "v1" {
			m.sources[o.Kind+"/"+ns+"/"+o.Name] = true
		}
		if o.makesSecret != "" && o.makesIn == nil {
			m.sources["Secret/"+ns+"/"+o.makesSecret] = true
		}
		if o.makesConfigMap != "" {
			m.sources["ConfigMap/"+ns+"/"+o.makesConfigMap] = true
		}
	}
	key := spec.DeepCopy()
	key.DependsOn, key.Path, key.PostBuild = nil, "", nil
	key.Interval, key.RetryInterval, key.Timeout = metav1.Duration{}, nil, nil
	key.Prune, key.Wait, key.HealthChecks, key.HealthCheckExprs = false, false, nil, nil
	if key.SourceRef.Namespace == "" {
		key.SourceRef.Namespace = ly.Kustomization.Namespace
	}
	key.DeletionPolicy = ""
	data, err := json.Marshal(key)
	m.specKey = ly.Kustomization.Namespace + "\x00" + ly.Parent + "\x00" + string(data)
	// A layer whose objects are unknown, that applies Kustomizations (the
	// tree's own structure), whose components are relative to its own
	// path, or that is suspended, stays as it is.
	// A stack's HelmRelease layer applies only the release fluxpack
	// renders for it: its path cannot take another layer's objects.
	m.canTake = err == nil && !ly.unknown && !m.applying && len(spec.Components) == 0 && !spec.Suspend && ly.HelmRelease == nil
	// Its readiness must not matter: no health checks, and wait only on
	// objects that are ready once applied; it must serve no webhook, run
	// no operator and install no chart.
	m.canJoin = m.canTake && !serving && !ly.Operator && !ly.release && ly.HelmRelease == nil &&
		len(spec.HealthChecks) == 0 && len(spec.HealthCheckExprs) == 0 && (!spec.Wait || !m.slow)
	return m
}

// checkMerges reports, as hints (RuleMerge), the groups of layers that can
// be one Kustomization: a layer (the one the others merge into) and
// layers it depends on whose readiness nothing needs.
func (l *linter) checkMerges() {
	n := len(l.layers)
	parents := map[string]bool{}
	for _, ly := range l.layers {
		if ly.Parent != "" {
			parents[ly.Parent] = true
		}
	}
	infos := make([]*mergeInfo, n)
	parallel.For(n, func(i int) { infos[i] = l.mergeInfo(l.layers[i], parents) }) // each reads its layer only
	dependents := make([][]*lintLayer, n)
	for _, ly := range l.layers {
		// Layer.DependsOn names the entries of spec.dependsOn, in order.
		deps := ly.Kustomization.Spec.DependsOn
		for i, d := range ly.DependsOn {
			dep, ok := l.byName[d]
			if ok && (len(deps) != len(ly.DependsOn) || deps[i].ReadyExpr != "") {
				infos[dep.index].guarded = true // a readyExpr asks more than Ready
			}
		}
		for _, d := range sortedKeys(ly.direct) {
			dep := l.byName[d]
			dependents[dep.index] = append(dependents[dep.index], ly)
		}
	}
	// Descendants first: a layer that can merge into a later one is part
	// of that later one's group, not the head of its own.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ancestorCount(l.layers[b]) - ancestorCount(l.layers[a]) })
	crit := l.p.CriticalPath()
	member := make([]bool, n)
	for _, t := range order {
		if member[t] || !infos[t].canTake {
			continue
		}
		group := l.mergeGroup(l.layers[t], infos, dependents, member)
		if len(group) == 0 {
			continue
		}
		for _, g := range group {
			member[g.index] = true
		}
		member[t] = true
		l.mergeFinding(l.layers[t], group, infos, dependents, crit)
	}
}

// mergeGroup returns the layers that can merge into t, each after those it
// depends on, or nil.
func (l *linter) mergeGroup(t *lintLayer, infos []*mergeInfo, dependents [][]*lintLayer, member []bool) []*lintLayer {
	ti := infos[t.index]
	cand := map[int]bool{}
	stack := sortedKeys(t.direct)
	for len(stack) > 0 {
		a := l.byName[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if cand[a.index] || member[a.index] || !l.canMergeInto(t, ti, a, infos[a.index]) {
			continue
		}
		cand[a.index] = true
		stack = append(stack, sortedKeys(a.direct)...)
	}
	// A layer stays only if every layer that depends on it is in the group
	// or waits for t anyway: then the merge delays no one and makes no
	// cycle (a path out of the group and back in would leave a layer
	// behind that depends on a member but not on t).
	for changed := true; changed; {
		changed = false
		for a := range cand {
			keep := !infos[a].guarded
			for _, d := range dependents[a] {
				if d != t && !cand[d.index] && !d.ancestors.has(t.index) {
					keep = false
				}
			}
			for b := range cand {
				if b != a && overlaps(infos[a].ids, infos[b].ids) {
					keep = false // kustomize refuses one id twice in a build
				}
			}
			if !keep {
				delete(cand, a)
				changed = true
			}
		}
	}
	var group []*lintLayer
	for a := range cand {
		group = append(group, l.layers[a])
	}
	// Dependencies first: a layer has more ancestors than any of its
	// ancestors; ties in declaration order.
	slices.SortFunc(group, func(a, b *lintLayer) int {
		if c := ancestorCount(a) - ancestorCount(b); c != 0 {
			return c
		}
		return a.index - b.index
	})
	return group
}

// longest is the length, in dependsOn edges, of the platform's longest
// chain when the edges among the layers in free cost nothing.
func (l *linter) longest(free map[string]bool) int {
	memo := make([]int, len(l.layers))
	for i := range memo {
		memo[i] = -1
	}
	var visit func(ly *lintLayer) int
	visit = func(ly *lintLayer) int {
		if memo[ly.index] >= 0 {
			return memo[ly.index]
		}
		memo[ly.index] = 0
		best := 0
		for d := range ly.direct {
			w := 1
			if free[ly.Name] && free[d] {
				w = 0
			}
			best = max(best, visit(l.byName[d])+w)
		}
		memo[ly.index] = best
		return best
	}
	best := 0
	for _, ly := range l.layers {
		best = max(best, visit(ly))
	}
	return best
}

func ancestorCount(ly *lintLayer) int {
	c := 0
	for _, w := range ly.ancestors {
		c += bits.OnesCount64(w)
	}
	return c
}

func overlaps(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// canMergeInto reports whether a, an ancestor of t, can be part of t's
// Kustomization as far as the two alone say.
func (l *linter) canMergeInto(t *lintLayer, ti *mergeInfo, a *lintLayer, ai *mergeInfo) bool {
	if !ai.canJoin || ai.specKey != ti.specKey || overlaps(ai.ids, ti.ids) {
		return false
	}
	ts, as := &t.Kustomization.Spec, &a.Kustomization.Spec
	// A suspended layer t waits for, and a does not, holds t back for
	// good until someone resumes it (an opt-in part of the platform, as
	// import keeps it): a's objects in t would be held back with it.
	for s := range t.ancestors.all {
		if l.layers[s].Kustomization.Spec.Suspend && !a.ancestors.has(s) {
			return false
		}
	}
	// The merged Kustomization is Ready as t is; under t's wait, a's
	// objects would be waited for too.
	if ts.Wait && ai.slow {
		return false
	}
	// What happens to a's objects when they leave the source or the layer
	// is deleted must stay as it is: as for t's, or kept either way, which
	// the prune: disabled annotation says inside t (see above).
	if ap := pruningOf(a.Kustomization); ap != pruningOf(t.Kustomization) && ap != (pruning{}) {
		return false
	}
	// t's postBuild applies to a's objects: the same variables, or a's
	// objects hold no ${var}.
	if !reflect.DeepEqual(ts.PostBuild, as.PostBuild) && (as.PostBuild != nil || ai.dollar) {
		return false
	}
	if pb := ts.PostBuild; pb != nil {
		for _, ref := range pb.SubstituteFrom {
			if ai.sources[ref.Kind+"/"+t.Kustomization.Namespace+"/"+ref.Name] {
				return false // Flux reads the variables before it applies
			}
		}
	}
	// t's webhooks and admission policies would race a's objects applied
	// with them (cluster definitions go first, before any webhook).
	if ti.cuts["*"] && len(ai.late) > 0 {
		return false
	}
	for g := range ai.late {
		if ti.cuts[g] {
			return false
		}
	}
	return true
}

// mergeFinding adds the hint that group merges into t.
func (l *linter) mergeFinding(t *lintLayer, group []*lintLayer, infos []*mergeInfo, dependents [][]*lintLayer, crit layering.CriticalPath) {
	all := append(slices.Clone(group), t)
	in := map[string]bool{}
	var names []string
	for _, m := range all {
		in[m.Name] = true
		names = append(names, m.Name)
	}
	m := &Merge{Layers: names}
	for _, x := range all {
		for d := range x.direct {
			if in[d] {
				m.Edges++
			}
		}
	}
	m.CriticalEdges = l.longest(nil) - l.longest(in)
	// The longest chain of edges inside the group: what t waits for.
	chain := map[string]int{}
	longest := 0
	for _, x := range all {
		for d := range x.direct {
			if in[d] {
				chain[x.Name] = max(chain[x.Name], chain[d]+1)
			}
		}
		longest = max(longest, chain[x.Name])
	}

	var defs, ready, unwaited []string
	for _, g := range group {
		desc := fmt.Sprintf("%q (%s)", g.Name, strings.Join(infos[g.index].kinds, ", "))
		switch {
		case infos[g.index].defOnly:
			defs = append(defs, desc)
		case !infos[g.index].slow:
			ready = append(ready, desc)
		default:
			unwaited = append(unwaited, desc)
		}
	}
	var why []string
	if len(defs) > 0 {
		why = append(why, fmt.Sprintf("kustomize-controller applies CRDs, Namespaces and ClusterRoles before the other objects of a Kustomization and waits until they are ready, CRDs established, so %s need%s no dependsOn", andList(defs), plural(len(defs), "s", "")))
	}
	if len(ready) > 0 {
		why = append(why, fmt.Sprintf("%s hold%s only objects that are ready once applied", andList(ready), plural(len(ready), "s", "")))
	}
	if len(unwaited) > 0 {
		why = append(why, fmt.Sprintf("%s %s Ready once applied (no wait, no health checks), so the edge only orders the apply", andList(unwaited), plural(len(unwaited), "is", "are")))
	}
	m.Why = fmt.Sprintf("%s; %s no webhook, operator, HelmRelease or health check", strings.Join(why, "; "), plural(len(group), "it has", "they have"))
	if t.Kustomization.Spec.PostBuild != nil {
		m.Why += fmt.Sprintf(", and make%s none of the variables %q substitutes", plural(len(group), "s", ""), t.Name)
	}

	// How to merge them.
	ts := &t.Kustomization.Spec
	var paths []string
	for _, x := range all {
		paths = append(paths, x.Kustomization.Spec.Path)
	}
	var outside []string
	for _, x := range all {
		for _, d := range x.DependsOn {
			if !in[d] && !slices.Contains(outside, d) {
				outside = append(outside, d)
			}
		}
	}
	deps := "none"
	if len(outside) > 0 {
		deps = strings.Join(quoted(outside), ", ")
	}
	m.Steps = append(m.Steps, fmt.Sprintf("keep %s (its name and readiness) with a path that builds the objects of %s; dependsOn: %s", l.p.KustomizationRef(t.Name), andList(paths), deps))
	var kept []string
	for _, x := range group {
		if pruningOf(x.Kustomization) != pruningOf(t.Kustomization) {
			how := "prune: false"
			if d := x.Kustomization.Spec.DeletionPolicy; d != "" {
				how += ", deletionPolicy: " + d
			}
			kept = append(kept, fmt.Sprintf("%q (%s)", x.Name, how))
		}
	}
	if len(kept) > 0 {
		m.Steps = append(m.Steps, fmt.Sprintf("keep %q's prune and deletionPolicy, with the annotation kustomize.toolkit.fluxcd.io/prune: disabled on the objects of %s, which keeps them as they are kept today", t.Name, andList(kept)))
	}
	interval, retry, timeout := ts.Interval.Duration, t.Kustomization.GetRetryInterval(), t.Kustomization.GetTimeout()
	var iv, rv, tv bool
	for _, g := range group {
		k := g.Kustomization
		if d := k.Spec.Interval.Duration; d != interval {
			interval, iv = min(interval, d), true
		}
		if d := k.GetRetryInterval(); d != retry {
			retry, rv = min(retry, d), true
		}
		if d := k.GetTimeout(); d != timeout {
			timeout, tv = max(timeout, d), true
		}
	}
	if iv {
		m.Steps = append(m.Steps, fmt.Sprintf("interval: the shortest, %s", interval))
	}
	if rv {
		m.Steps = append(m.Steps, fmt.Sprintf("retryInterval: the shortest, %s", retry))
	}
	if tv {
		m.Steps = append(m.Steps, fmt.Sprintf("timeout: the longest, %s", timeout))
	}
	var orphan, drop []string
	for _, g := range group {
		if pruningOf(g.Kustomization).onDelete != "" {
			orphan = append(orphan, l.p.KustomizationRef(g.Name))
		}
		for _, d := range dependents[g.index] {
			if !in[d.Name] {
				drop = append(drop, fmt.Sprintf("%q from the dependsOn of %q", g.Name, d.Name))
			}
		}
	}
	if len(drop) > 0 {
		m.Steps = append(m.Steps, fmt.Sprintf("drop %s (it waits for %q already)", andList(drop), t.Name))
	}
	if len(orphan) > 0 {
		m.Steps = append(m.Steps, fmt.Sprintf("before deleting %s, set %s deletionPolicy: Orphan, or %s objects are garbage-collected", andList(orphan), plural(len(orphan), "its", "their"), plural(len(orphan), "its", "their")))
	}
	m.Saving = m.saving(crit, longest)
	// One line: the long explanation is in docs/lint-rules.md#merge, the
	// steps of this merge in the JSON report, not in every run's output.
	var merged []string
	for _, g := range group {
		merged = append(merged, g.Name)
	}
	msg := fmt.Sprintf("%s can merge into %q (one Kustomization, no race), %s; how and why: -o json, docs/lint-rules.md#merge; rules: {merge: off} in %s turns this hint off",
		andList(quoted(merged)), t.Name, m.short(crit, longest), ConfigFile)
	l.add(Finding{Rule: RuleMerge, Severity: SeverityHint, Layer: t.Name, File: t.File, Line: t.Line, Message: msg, Merge: m})
}

// short is what the merge saves, in a few words.
func (m *Merge) short(crit layering.CriticalPath, longest int) string {
	switch {
	case m.CriticalEdges == 0:
		return fmt.Sprintf("saving %s before %q is Ready (not bootstrap time)", edges(longest), m.Into())
	case crit.Woken:
		return fmt.Sprintf("shortening the critical path by %s", edges(m.CriticalEdges))
	}
	return fmt.Sprintf("saving up to %s of dependency polling in stock Flux", time.Duration(m.CriticalEdges)*layering.DefaultRequeueDependency)
}

// saving says what the merge saves in stock Flux; longest is the longest
// chain of edges inside the group.
func (m *Merge) saving(crit layering.CriticalPath, longest int) string {
	switch {
	case m.CriticalEdges == 0 && crit.Woken:
		return fmt.Sprintf("The critical path (%s) stays as long; the merge saves %s before %q is Ready, each an event of wake (up to --requeue-dependency=%s each without notification-controller or the wake Secret), not bootstrap time",
			strings.Join(crit.Layers, " -> "), edges(longest), m.Into(), layering.DefaultRequeueDependency)
	case m.CriticalEdges == 0:
		return fmt.Sprintf("The critical path (%s) stays as long; in stock Flux the merge saves up to %s of dependency polling before %q is Ready (%s × --requeue-dependency=%s), not bootstrap time",
			strings.Join(crit.Layers, " -> "), time.Duration(longest)*layering.DefaultRequeueDependency, m.Into(), edges(longest), layering.DefaultRequeueDependency)
	case crit.Woken:
		return fmt.Sprintf("The critical path loses %s: with wake, each costs one event through notification-controller (up to --requeue-dependency=%s each without notification-controller or the wake Secret)",
			edges(m.CriticalEdges), layering.DefaultRequeueDependency)
	}
	out := fmt.Sprintf("Saves up to %s of dependency polling in stock Flux: the critical path loses %s × --requeue-dependency=%s",
		time.Duration(m.CriticalEdges)*layering.DefaultRequeueDependency, edges(m.CriticalEdges), layering.DefaultRequeueDependency)
	if hint := crit.WakeHint(); hint != "" {
		out += "; without merging, " + hint
	}
	return out
}

func edges(n int) string { return fmt.Sprintf("%d dependsOn edge%s", n, plural(n, "", "s")) }

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// andList joins items as a sentence does: a, b and c.
func andList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
