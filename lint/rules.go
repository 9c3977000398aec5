package lint

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fluxpack/fluxpack/internal/kinds"
	"github.com/fluxpack/fluxpack/internal/suggest"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// builtinGroups are API groups every cluster serves (Kubernetes' own), plus
// Flux's, which bootstrap installs before any layer.
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"apiextensions.k8s.io": true, "admissionregistration.k8s.io": true, "scheduling.k8s.io": true,
	"coordination.k8s.io": true, "node.k8s.io": true, "discovery.k8s.io": true,
	"certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true, "apiregistration.k8s.io": true,
	"events.k8s.io": true, "resource.k8s.io": true, "authentication.k8s.io": true,
	"authorization.k8s.io": true, "internal.apiserver.k8s.io": true, "storagemigration.k8s.io": true,
}

// isBuiltinGroup: Kubernetes' groups, and Flux's (the toolkit's, and
// source.extensions.fluxcd.io of Flux ≥ 2.7's ArtifactGenerator), which
// bootstrap installs before any layer.
func isBuiltinGroup(g string) bool {
	return builtinGroups[g] || strings.HasSuffix(g, ".toolkit.fluxcd.io") || g == "source.extensions.fluxcd.io" ||
		// flux-operator's FluxInstance and ResourceSet: a cluster whose
		// Flux is flux-operator's has them before it syncs any layer.
		g == "fluxcd.controlplane.io"
}

// isCR is true for an object of a custom resource kind.
func isCR(o *object) bool { return !isBuiltinGroup(o.group()) }

func names(layers []string) string {
	q := make([]string, len(layers))
	for i, l := range layers {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, ", ")
}

// deadlock says why a custom resource in the layer of the HelmRelease that
// brings its CRD never applies.
const deadlock = "kustomize-controller's dry-run of the custom resource fails (no matches for kind), so it applies none of the layer's objects, this HelmRelease included, and the CRD never comes: a deadlock, not a race; move the custom resources to a layer that depends on this one"

// checkCRDs: every custom resource needs its CRD in a layer applied before
// its own (RuleCRDOrder), or in its own layer as a plain object:
// kustomize-controller applies a Kustomization's CRDs first and waits
// until they are established (its staged apply). A CRD that a HelmRelease
// of the same layer installs comes only after the layer is applied, which
// never happens (RuleHelmCRDs).
func (l *linter) checkCRDs(ly *lintLayer) {
	for _, o := range ly.objects {
		if !isCR(o) {
			continue
		}
		gk := o.group() + "/" + o.Kind
		var ok bool
		var sameRelease *object // a release of this layer whose rendered chart defines it
		var others []string
		for _, d := range l.crds[gk] {
			if !l.sameCluster(ly, l.byName[d.layer]) {
				continue // a CRD of another cluster (spec.kubeConfig)
			}
			switch {
			case o.release != nil && d.obj.release == o.release:
				// Helm-controller applies a chart's CRDs before its
				// templates, and waits until they are established.
				ok = true
			case l.isApplied(ly, d.layer):
				ok = true
			case d.layer == ly.Name && d.obj.release == nil:
				ok = true // the staged apply
			case d.layer == ly.Name:
				if sameRelease == nil {
					sameRelease = d.obj.release
				}
			default:
				others = append(others, d.layer)
			}
		}
		switch {
		case ok:
			continue
		case slices.Contains(l.existingGroups(), o.group()):
			continue
		case l.crdGated(ly, o.group()):
			continue
		case l.unknownAncestor(ly) || l.unrenderedMayBring(ly, o.group()):
			// A chart lint could not render, or a layer it could not read,
			// applied before this one may bring the CRD: no claim.
			continue
		}
		if sameRelease != nil && len(others) == 0 {
			l.objFinding(RuleHelmCRDs, ly, o, "%s installs the CRD of %s (%s) in this same layer (install.crds: %s): %s", sameRelease.ref(), o.Kind, o.group(), sameRelease.helmCRDs, deadlock)
			continue
		}
		if len(others) == 0 {
			if hr := l.assumedCRDRelease(ly, o.group()); hr != nil {
				l.objFinding(RuleHelmCRDs, ly, o, "%s installs the CRDs of %s in this same layer (%s; assumed from fluxpack's table of known operators, as lint could not render the chart: %v): %s", hr.ref(), o.group(), crdsHow(hr), hr.chartErr, deadlock)
				continue
			}
		}
		switch {
		case len(others) > 0 && sameRelease != nil:
			// Not a deadlock: the other layer may bring the CRD first.
			l.objEdge(RuleCRDOrder, ly, o, others, "the CRD of %s (%s) is in layer %s, which this layer does not depend on; %s of this layer installs it too, but only once the layer is applied, which its custom resources hold up until the CRD exists", o.Kind, o.group(), names(others), sameRelease.ref())
		case len(others) > 0 && l.appliedBy(others[0], ly):
			l.objFinding(RuleCRDOrder, ly, o, "the CRD of %s (%s) is in layer %q, which this layer applies itself: %s", o.Kind, o.group(), others[0], childDeadlock(others[0]))
		case len(others) > 0:
			l.objEdge(RuleCRDOrder, ly, o, others, "the CRD of %s (%s) is in layer %s, which this layer does not depend on", o.Kind, o.group(), names(others))
		case l.assumedCRDLayer(ly, o.group()) != nil && l.appliedBy(l.assumedCRDLayer(ly, o.group()).Name, ly):
			other, hr := l.assumedCRDLayer(ly, o.group()), l.assumedCRDRelease(l.assumedCRDLayer(ly, o.group()), o.group())
			l.objEdge(RuleCRDOrder, ly, o, []string{other.Name}, "the CRDs of %s come from %s in layer %q (assumed from fluxpack's table of known operators, as lint could not render the chart: %v), which this layer applies itself: %s", o.group(), hr.ref(), other.Name, hr.chartErr, childDeadlock(other.Name))
		case l.assumedCRDLayer(ly, o.group()) != nil:
			other, hr := l.assumedCRDLayer(ly, o.group()), l.assumedCRDRelease(l.assumedCRDLayer(ly, o.group()), o.group())
			l.objFinding(RuleCRDOrder, ly, o, "the CRDs of %s come from %s in layer %q (assumed from fluxpack's table of known operators, as lint could not render the chart: %v), which this layer does not depend on: depend on it, or declare the group as existing before Flux (%s)", o.group(), hr.ref(), other.Name, hr.chartErr, l.existingAdvice("existingAPIGroups"))
		case l.crdReleaseElsewhere(ly), len(ly.unrendered) > 0, l.anyUnknown():
			// A chart lint could not render (in this layer or another) or
			// a layer it could not read may bring the CRD, or it may exist
			// before Flux: lint cannot tell a race from no problem, and
			// Coverage names the layer.
			l.undecided(ly, CoverageChart)
		default:
			l.objFinding(RuleCRDOrder, ly, o, "no layer defines the CRD of %s (%s): add it to a layer this one depends on, or declare the group as existing before Flux (%s)", o.Kind, o.group(), l.existingAdvice("existingAPIGroups"))
		}
	}
}

// crdGated reports whether a layer Ready before ly (isReadyBefore: a
// parent that only applies ly's Kustomization is not) health-checks a
// CustomResourceDefinition of group (a gate: an empty Kustomization whose
// healthChecks name the CRD an operator's chart installs, as home-ops
// repositories write for CRDs they do not apply themselves), or applies a
// custom resource of group itself (usersOf: a layer depending on the one
// that applies the ClusterSecretStore its ExternalSecrets read). Flux holds
// ly until that layer is Ready, which it is only once its apply passed,
// the CRD established; and a group's CRDs come together (one chart's, in
// one apply), so ly's custom resources of the group find theirs. A gate's
// webhook may not serve yet: webhook-order still decides.
func (l *linter) crdGated(ly *lintLayer, group string) bool {
	if l.readyUser(ly, l.usersOf(group)) {
		return true
	}
	for _, other := range l.layers {
		if other == ly || !l.sameCluster(ly, other) || !l.isReadyBefore(ly, other.Name) {
			continue
		}
		for _, hc := range other.Kustomization.Spec.HealthChecks {
			if hc.Kind == "CustomResourceDefinition" && strings.HasPrefix(hc.APIVersion, "apiextensions.k8s.io/") && strings.HasSuffix(hc.Name, "."+group) {
				return true
			}
		}
	}
	return false
}

// appliedBy reports whether layer child's Kustomization is applied by
// parent, or by a layer parent applies: parent's custom resources cannot
// wait for it, since parent's own apply creates it.
func (l *linter) appliedBy(child string, parent *lintLayer) bool {
	seen := map[string]bool{}
	for c := l.byName[child]; c != nil && !seen[c.Name]; c = l.byName[c.Parent] {
		seen[c.Name] = true
		if c.Parent == parent.Name {
			return true
		}
	}
	return false
}

// childDeadlock says why a custom resource whose CRD a layer's own child
// brings never applies, and what to do.
func childDeadlock(child string) string {
	return fmt.Sprintf("kustomize-controller's dry-run of the custom resource fails (no matches for kind), so this layer applies none of its objects, the Kustomization of %q included, and the CRD never comes: a deadlock on a new cluster, not a race; a dependsOn cannot help, since this layer creates %q: move the custom resource into a layer that depends on %q", child, child, child)
}

// assumedCRDLayer is a layer other than ly, not applied before it, with a
// HelmRelease whose chart lint could not render and that the table of
// known operators ties to group; nil when there is none.
func (l *linter) assumedCRDLayer(ly *lintLayer, group string) *lintLayer {
	for _, other := range l.layers {
		if other != ly && !ly.applied.has(other.index) && l.assumedCRDRelease(other, group) != nil {
			return other
		}
	}
	return nil
}

// undecided records that a rule could not decide for ly, for cause.
func (l *linter) undecided(ly *lintLayer, cause string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.undecidedBy == nil {
		l.undecidedBy = map[string]map[string]bool{}
	}
	if l.undecidedBy[cause] == nil {
		l.undecidedBy[cause] = map[string]bool{}
	}
	l.undecidedBy[cause][ly.Name] = true
}

// existingGroups are the API groups that exist before the platform.
func (l *linter) existingGroups() []string {
	return slices.Concat(l.p.ExistingAPIGroups, l.cfg.existingGroups)
}

// existingAdvice names where the user says that something exists before
// Flux: the stack file's field for a stack, the config file or flag for a
// repository.
func (l *linter) existingAdvice(field string) string {
	if l.cfg.repository {
		flag := map[string]string{"existingAPIGroups": "--existing-api-group", "existingNamespaces": "--existing-namespace"}[field]
		return flag + ", or a bootstrap helmfile that installs it"
	}
	return "spec." + field + " of the stack"
}

// assumedCRDRelease is a HelmRelease of ly whose chart lint could not
// render and that the table of known operators ties to group, or nil.
func (l *linter) assumedCRDRelease(ly *lintLayer, group string) *object {
	for _, hr := range ly.unrendered {
		if tiedTo(hr, group) {
			return hr
		}
	}
	return nil
}

// unknownAncestor reports whether a layer applied before ly could not be
// read: what no rule can see may be there.
func (l *linter) unknownAncestor(ly *lintLayer) bool {
	return l.unknownAncestorWhere(ly, func(*lintLayer) bool { return true })
}

// unknownAncestorWhere reports whether a layer applied before ly could not
// be read, for a reason that which accepts.
func (l *linter) unknownAncestorWhere(ly *lintLayer, which func(*lintLayer) bool) bool {
	for a := range ly.applied.all {
		if l.layers[a].unknown && which(l.layers[a]) {
			return true
		}
	}
	return false
}

// unrenderedBefore returns the HelmReleases of the layers applied before
// ly whose charts lint could not render and that may install CRDs.
func (l *linter) unrenderedBefore(ly *lintLayer) []*object {
	var out []*object
	for a := range ly.applied.all {
		out = append(out, l.layers[a].unrendered...)
	}
	return out
}

// unrenderedMayBring reports whether a chart lint could not render, of a
// layer applied before ly, may install the CRDs of group. Any such chart
// may, unless the table of known operators ties the group to a chart that
// a layer ly does not wait for installs (assumedCRDLayer): then that chart
// is where the platform's CRDs of group come from, and only a chart the
// table ties to the group, before ly, brings them in time. A chart of
// another name is not taken for it: a volsync chart does not install
// ExternalSecret's CRDs, and webhook-order does not take it for the
// group's webhook server either, so the two rules agree on the layer. The
// layer stays in the chart coverage all the same (missingChart): what else
// that chart holds is still unknown.
func (l *linter) unrenderedMayBring(ly *lintLayer, group string) bool {
	before := l.unrenderedBefore(ly)
	if len(before) == 0 {
		return false
	}
	if l.assumedCRDLayer(ly, group) == nil {
		return true
	}
	return slices.ContainsFunc(before, func(hr *object) bool { return tiedTo(hr, group) })
}

// tiedTo reports whether the table of known operators ties the chart of
// the HelmRelease hr, which lint could not render, to group.
func tiedTo(hr *object, group string) bool {
	return slices.ContainsFunc(hr.assumed, func(k string) bool {
		g, _, _ := strings.Cut(k, "/")
		return g == group
	})
}

// crdReleaseElsewhere reports whether a layer other than ly and those
// applied before it installs a chart lint could not render, which may
// install CRDs.
func (l *linter) crdReleaseElsewhere(ly *lintLayer) bool {
	return slices.ContainsFunc(l.layers, func(other *lintLayer) bool {
		return len(other.unrendered) > 0 && other != ly && !ly.applied.has(other.index)
	})
}

// operatorsFor returns the layers that serve admission webhooks for the
// resource of group that kind is: those applying a webhook configuration
// that intercepts it, or installing a chart that the table of known
// operators says does. Nothing else makes a layer its server: not being
// marked as an operator (MarkOperator says a layer must be Ready before
// its custom resources, not which groups it serves), nor installing a
// HelmRelease after the CRDs.
func (l *linter) operatorsFor(group, kind string) []*lintLayer {
	key := group + "/" + kind
	if ops, ok := l.operators[key]; ok {
		return ops
	}
	resource := l.resourceOf(group, kind)
	var out []*lintLayer
	for _, op := range l.layers {
		if covers(op.webhooks, group, resource) {
			out = append(out, op)
		}
	}
	l.operators[key] = out
	return out
}

// checkWebhooks: a custom resource must be applied after the operator that
// serves its admission webhook, not just after its CRD (seed 000).
func (l *linter) checkWebhooks(ly *lintLayer) {
	seen := map[string]bool{}
	served := map[string]bool{} // servedBefore, by operator and group
	for _, o := range ly.objects {
		if !isCR(o) {
			continue
		}
		resource := l.resourceOf(o.group(), o.Kind)
		if covers(l.cfg.existingWebhooks, o.group(), resource) {
			continue // its server runs before Flux
		}
		for _, op := range l.operatorsFor(o.group(), o.Kind) {
			if op.Name == ly.Name || l.isReadyBefore(ly, op.Name) {
				continue
			}
			sk := op.Name + "\x00" + o.group()
			if _, ok := served[sk]; !ok {
				served[sk] = l.servedBefore(op, ly, o.group())
			}
			if served[sk] {
				continue // a layer Ready before ly passed the webhook: its race, if any, is that layer's
			}
			server := l.clusterOf(op)
			if hr := l.assumedServer(op, o.group(), resource); hr != nil {
				server = l.objectCluster(op, hr)
			}
			if server != l.clusterOf(ly) {
				continue // it serves another cluster (spec.kubeConfig)
			}
			key := op.Name + "\x00" + o.group() + "/" + resource
			if seen[key] {
				continue
			}
			seen[key] = true
			why := ""
			if hr := l.assumedServer(op, o.group(), resource); hr != nil {
				why = fmt.Sprintf(" (assumed from fluxpack's table of known operators, as lint could not render the chart of %s: %v)", hr.ref(), hr.chartErr)
			}
			wait := ""
			if spec := &op.Kustomization.Spec; !spec.Wait && len(spec.HealthChecks) == 0 {
				wait = fmt.Sprintf(", and give %q wait: true or health checks on its workload, or it is Ready before its webhook serves", op.Name)
			}
			l.objEdge(RuleWebhookOrder, ly, o, []string{op.Name}, "operator layer %q serves the admission webhook of %s %s%s, but this layer does not depend on it: the custom resource races the webhook (connection refused); depend on %q, not just on the CRDs%s", op.Name, o.group(), resource, why, op.Name, wait)
		}
	}
}

// usersOf returns the layers that apply a custom resource of group
// themselves (kustomize-controller's apply, not a chart's).
func (l *linter) usersOf(group string) layerSet {
	if l.crUsers == nil {
		l.crUsers = map[string]layerSet{}
		for _, ly := range l.layers {
			for _, o := range ly.objects {
				if !isCR(o) || o.release != nil {
					continue
				}
				s := l.crUsers[o.group()]
				if s == nil {
					s = make(layerSet, (len(l.layers)+63)/64)
					l.crUsers[o.group()] = s
				}
				s.add(ly.index)
			}
		}
	}
	return l.crUsers[group]
}

// bringsCRD reports whether op defines the CRD of group/kind too (its own
// manifests, a chart lint rendered, or one the table of known operators
// ties to group): its webhook configuration then comes with the CRD, in
// the same apply (servedBefore).
func (l *linter) bringsCRD(op *lintLayer, group, kind string) bool {
	for _, d := range l.crds[group+"/"+kind] {
		if d.layer == op.Name {
			return true
		}
	}
	return l.assumedCRDRelease(op, group) != nil
}

// readyUser reports whether a layer of users, in ly's cluster and other
// than ly, is Ready before ly (isReadyBefore). Such a layer is Ready only
// once kustomize-controller applied its custom resource, its CRD there;
// so the custom resources of ly that the same CRDs define find them too,
// and their race, if any, is that layer's finding, once.
func (l *linter) readyUser(ly *lintLayer, users layerSet) bool {
	if users == nil {
		return false
	}
	for i := range users.all {
		if other := l.layers[i]; other != ly && ly.readyBefore.has(i) && l.sameCluster(ly, other) {
			return true
		}
	}
	return false
}

// assumedServer is the HelmRelease of op whose chart the table of known
// operators says serves group/resource, when no webhook configuration op
// applies says so for certain; nil otherwise.
func (l *linter) assumedServer(op *lintLayer, group, resource string) *object {
	for _, k := range []string{webhookKey(group, resource), webhookKey(group, "*")} {
		if hr := op.assumed[k]; hr != nil {
			return hr
		}
	}
	return nil
}

// checkOperators: an operator layer must be Ready only when it serves, so
// it needs wait or health checks; it races when a layer that waits for it
// applies what its webhooks admit (a layer marked as an operator, when any
// layer waits for it). What no layer waits for is not raced by its being
// Ready early.
func (l *linter) checkOperators() {
	for _, op := range l.layers {
		spec := &op.Kustomization.Spec
		if spec.Wait || len(spec.HealthChecks) > 0 {
			continue
		}
		if len(op.webhooks) == 0 && !op.Operator && len(op.assumed) == 0 {
			continue
		}
		if dep, o := l.raceOnReady(op); dep != nil {
			what := ""
			if o != nil {
				what = fmt.Sprintf(" and applies %s, which its webhook admits", o.ref())
			}
			l.layerFinding(RuleOperatorWait, op, "operator layer without wait or healthChecks is Ready as soon as it is applied, before its webhook serves; layer %q waits for it%s: set wait: true, or health checks on its workload", dep.Name, what)
		}
	}
}

// raceOnReady returns a layer that waits for op to be Ready and applies a
// custom resource whose admission webhook op serves (with that object),
// or, for a layer marked as an operator, any layer that waits for it.
// A layer that waits for op only through another that applies a custom
// resource of the same group which op's webhook admits does not race: see
// servedBefore. So the layer named is one that does race: with op (wait:
// false) holding an operator's HelmRelease, cfg (dependsOn op) and apps
// (dependsOn cfg) both applying its custom resources, cfg races the
// webhook and apps, behind cfg, does not.
func (l *linter) raceOnReady(op *lintLayer) (*lintLayer, *object) {
	var marked *lintLayer
	for _, ly := range l.layers {
		if ly == op || !l.isReadyBefore(ly, op.Name) {
			continue
		}
		if marked == nil && op.Operator {
			marked = ly
		}
		for _, o := range ly.objects {
			if l.admits(op, o) && !l.servedBefore(op, ly, o.group()) {
				return ly, o
			}
		}
	}
	return marked, nil
}

// admits reports whether o is a custom resource whose admission webhook
// op serves, and that no webhook running before Flux serves.
func (l *linter) admits(op *lintLayer, o *object) bool {
	if !isCR(o) || covers(l.cfg.existingWebhooks, o.group(), l.resourceOf(o.group(), o.Kind)) {
		return false
	}
	return slices.Contains(l.operatorsFor(o.group(), o.Kind), op)
}

// servedBefore reports whether op's webhook for group has served before ly
// reconciles: a layer Ready before ly applies a custom resource of group
// that op's webhook admits, and op's webhook configuration was there when
// it did: that layer itself waits for op, or op brings the CRD of that
// resource too (bringsCRD: the configuration comes with the CRD, in one
// apply, and the resource could not be applied before its CRD; the
// layer behind the one applying the ClusterSecretStore its ExternalSecrets
// read, with no dependsOn on the operator). kustomize-controller marks a
// Kustomization Ready only once its apply succeeded (and, with wait, its
// objects are healthy); the API server admits that custom resource only
// once the webhook answers (failurePolicy Fail, connection refused
// before), so that layer is not Ready before the webhook serves, wait or
// not. A custom resource of that layer's chart proves it only when the
// layer waits (wait: true): without it, the layer is Ready once the
// HelmRelease is applied, before helm-controller installs the chart. One
// group stands for one webhook server: a layer holding both cert-manager
// and external-secrets proves nothing about cert-manager by an
// ExternalSecret.
func (l *linter) servedBefore(op, ly *lintLayer, group string) bool {
	for w := range ly.readyBefore.all {
		between := l.layers[w]
		if between == op || between == ly {
			continue
		}
		waits := between.readyBefore.has(op.index)
		for _, o := range between.objects {
			if o.group() == group && (o.release == nil || between.Kustomization.Spec.Wait) && l.admits(op, o) && (waits || l.bringsCRD(op, group, o.Kind)) {
				return true
			}
		}
	}
	return false
}

// hit is a missing namespace of a layer and the objects that need it.
type hit struct {
	objs     []*object
	ns       string
	creators []string // the layers of its cluster that create the namespace
}

// alwaysThere are namespaces no layer needs to create.
var alwaysThere = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// checkNamespaces: an object's namespace must be created by the layer
// itself (Flux applies namespaces first) or an ancestor.
func (l *linter) checkNamespaces(ly *lintLayer) {
	missing := map[string]*hit{}
	var order []string
	for _, o := range ly.objects {
		for _, need := range l.namespacesOf(ly, o) {
			l.needNamespace(ly, o, need, missing, &order)
		}
	}
	// One finding per namespace (Group), listing every object that needs
	// it.
	for _, key := range order {
		h := missing[key]
		for _, o := range h.objs {
			if len(h.creators) > 0 {
				l.objEdge(RuleNamespaceOrder, ly, o, h.creators, "namespace %q is created by layer %s, which this layer does not depend on", h.ns, names(h.creators))
			} else if !l.unknownAncestor(ly) {
				l.objFinding(RuleNamespaceOrder, ly, o, "no layer creates namespace %q: add a Namespace to a layer this one depends on, or declare it as existing before Flux (%s)", h.ns, l.existingAdvice("existingNamespaces"))
			}
		}
	}
}

// namespaceNeed is a namespace an object needs, in the cluster it acts on.
type namespaceNeed struct{ ns, cluster string }

// namespacesOf returns the namespaces o needs to exist when its layer
// applies it: its own, and for a HelmRelease the namespace helm-controller
// installs into (spec.targetNamespace, unless install.createNamespace) and
// the one it keeps the release's storage in (spec.storageNamespace), in the
// cluster it installs into: helm-controller fails the release until they
// exist. A custom resource whose CRD lint does not have may be
// cluster-scoped: it needs no namespace lint can name.
func (l *linter) namespacesOf(ly *lintLayer, o *object) []namespaceNeed {
	var out []namespaceNeed
	if o.Namespace != "" && !l.isClusterScoped(o) && (!isCR(o) || l.scope[o.group()+"/"+o.Kind] != "") {
		out = append(out, namespaceNeed{o.Namespace, l.clusterOf(ly)})
	}
	if o.helmCRDs != "" {
		cluster := l.objectCluster(ly, o)
		if ns := yamlutil.Str(o.Node, "spec", "targetNamespace"); ns != "" && yamlutil.Str(o.Node, "spec", "install", "createNamespace") != "true" {
			out = append(out, namespaceNeed{ns, cluster})
		}
		if ns := yamlutil.Str(o.Node, "spec", "storageNamespace"); ns != "" {
			out = append(out, namespaceNeed{ns, cluster})
		}
	}
	return out
}

// needNamespace records that o of ly needs a namespace, unless a layer of
// its cluster, the layer itself or one applied before it, creates it, or it
// exists before the platform.
func (l *linter) needNamespace(ly *lintLayer, o *object, need namespaceNeed, missing map[string]*hit, order *[]string) {
	ns := need.ns
	if slices.Contains(alwaysThere, ns) || ns == l.p.Namespace && need.cluster == "" || slices.Contains(l.p.ExistingNamespaces, ns) || slices.Contains(l.cfg.existingNamespaces, ns) ||
		l.isExternal("Namespace", "", ns) {
		return
	}
	var creators []string
	for _, c := range l.namespaces[ns] {
		if l.clusterOf(l.byName[c]) == need.cluster {
			creators = append(creators, c)
		}
	}
	if slices.Contains(creators, ly.Name) || slices.ContainsFunc(creators, func(c string) bool { return l.isApplied(ly, c) }) {
		return
	}
	key := need.cluster + "\x00" + ns
	if h, ok := missing[key]; ok {
		if h.objs[len(h.objs)-1] != o { // a HelmRelease may need one twice
			h.objs = append(h.objs, o)
		}
		return
	}
	missing[key] = &hit{objs: []*object{o}, ns: ns, creators: creators}
	*order = append(*order, key)
}

func (l *linter) isClusterScoped(o *object) bool {
	if isBuiltinGroup(o.group()) {
		return kinds.ClusterScoped(o.Kind)
	}
	return l.scope[o.group()+"/"+o.Kind] == "Cluster"
}

// checkPrune: deleting a CRD deletes every custom resource of it, so a
// layer holding CRDs must not prune.
func (l *linter) checkPrune(ly *lintLayer) {
	if !ly.Kustomization.Spec.Prune {
		return
	}
	for _, o := range ly.objects {
		// Flux's own CRDs (flux bootstrap's gotk-components.yaml) are
		// Flux's to manage; an object annotated
		// kustomize.toolkit.fluxcd.io/prune: disabled is never pruned.
		if o.crd != nil && o.release == nil && !isBuiltinGroup(o.crd.group) && yamlutil.Str(o.Node, "metadata", "annotations", "kustomize.toolkit.fluxcd.io/prune") != "disabled" {
			l.objFinding(RuleCRDPrune, ly, o, "prune: true on a layer holding CRDs: removing the CRD from the source (or deleting the layer) deletes every %s in the cluster; use prune: false (KeepOnDelete)", o.crd.kind)
			return
		}
	}
}

// checkHealthChecks: a health check (or a healthCheckExprs entry) must be
// about an object that the layer itself or a layer it depends on creates,
// or that exists before the platform; otherwise the layer waits for
// something that never comes, or comes from a layer that races it, and
// fails when its timeout runs out.
func (l *linter) checkHealthChecks(ly *lintLayer) {
	spec := &ly.Kustomization.Spec
	if len(spec.HealthChecks) == 0 && len(spec.HealthCheckExprs) == 0 {
		return
	}
	for _, hc := range spec.HealthChecks {
		ns := hc.Namespace
		if hc.Name == "*" || ns == "*" {
			l.layerFinding(RuleHealthCheck, ly, "health check %s/%s/%s: Flux takes names literally (no wildcards): it waits for an object named %q until the layer times out; name the objects, or use wait: true", hc.Kind, hc.Namespace, hc.Name, hc.Name)
			continue
		}
		group, _, _ := strings.Cut(hc.APIVersion, "/")
		if !strings.Contains(hc.APIVersion, "/") {
			group = ""
		}
		if l.isExternal(hc.Kind, ns, hc.Name) {
			continue
		}
		makers := l.makers(group, hc.Kind, ns, hc.Name)
		switch {
		case slices.Contains(makers, ly.Name) || slices.ContainsFunc(makers, func(m string) bool { return l.isApplied(ly, m) }):
		case len(makers) > 0:
			l.layerEdge(RuleHealthCheck, ly, makers, "health check %s/%s/%s: the object is created by layer %s, which this layer does not depend on: the check races that layer; depend on it", hc.Kind, ns, hc.Name, names(makers))
		default:
			ref := objectRef(hc.Kind, ns, hc.Name)
			l.missingObject(ly, group, hc.Kind, ref, func(near, assumed string) {
				l.layerFinding(RuleHealthCheck, ly, "health check %s: no layer creates this object%s%s: the layer waits for it until its timeout and fails, and every layer that depends on it waits too; fix the name, or declare it as made outside", ref, near, assumed)
			})
		}
	}
	if ly.unknown {
		return
	}
	// An expression applies to the objects of its kind that Flux checks:
	// every object the layer applies under wait, the health checks
	// otherwise; either way, one of that kind must be there.
	for _, e := range spec.HealthCheckExprs {
		kinds := 0
		for _, o := range ly.objects {
			if o.APIVersion == e.APIVersion && o.Kind == e.Kind {
				kinds++
			}
		}
		for _, hc := range spec.HealthChecks {
			if hc.APIVersion == e.APIVersion && hc.Kind == e.Kind {
				kinds++
			}
		}
		if kinds == 0 {
			// Flux fails nothing for it: a hint, not a race.
			l.add(Finding{Rule: RuleHealthCheck, Severity: SeverityHint, Layer: ly.Name, File: ly.File, Line: ly.Line,
				Message: fmt.Sprintf("healthCheckExprs for %s %s: the layer neither applies nor health-checks an object of that kind, so the expression never runs", e.APIVersion, e.Kind)})
		}
	}
}

// missingObject decides about an object of kind ref (group, kind) that ly
// needs and no layer lint read applies: report(near, assumed) when it can
// tell Flux fails for it, near being a "did you mean" naming the closest
// object of that kind the layers apply, if one is close. An object of a
// chart or source lint could not read (Coverage) may be there: then it
// says, by Coverage, that it could not check ly, rather than claim the
// object is missing. Charts are assumed to make no Flux objects (their
// HelmReleases, Kustomizations and sources are in the repository), so a
// Flux object with a close name among those the layers apply is a typo
// unless a layer lint could not read may apply it; assumed says so when
// a chart lint did not render is in play.
func (l *linter) missingObject(ly *lintLayer, group, kind, ref string, report func(near, assumed string)) {
	near := suggest.DidYouMean(ref, l.appliedRefs(group, kind))
	unread := l.unreadCauses()
	hiddenAnywhere := slices.ContainsFunc(l.layers, func(x *lintLayer) bool { return x.missingChart })
	if isFluxGroup(group) && near != "" && len(unread) == 0 && !ly.unknown && !l.unknownAncestor(ly) {
		assumed := ""
		if hiddenAnywhere || l.unseenChart(ly) {
			assumed = " (charts lint did not render are assumed to make no Flux objects)"
		}
		report(near, assumed)
		return
	}
	switch {
	case ly.unknown || l.unknownAncestor(ly) || l.unseenChart(ly):
		// It may be among objects lint could not read, or in a chart it
		// could not render, of this layer or one applied before:
		// Coverage says so.
	case len(unread) > 0 || hiddenAnywhere:
		// Made there, it would race; but lint cannot say it is not made:
		// Coverage says what would let it decide.
		for _, cause := range unread {
			l.undecided(ly, cause)
		}
		if hiddenAnywhere {
			l.undecided(ly, CoverageChart)
		}
	default:
		report(near, "")
	}
}

// unreadCauses are the Coverage causes of the layers whose objects lint
// could not read though Flux may apply them: a source not available
// offline, remote resources. (A layer whose path does not build is a
// finding: Flux applies nothing of it either.)
func (l *linter) unreadCauses() []string {
	var out []string
	for _, x := range l.layers {
		switch {
		case !x.unknown:
		case x.remote != "" && !slices.Contains(out, CoverageRemote):
			out = append(out, CoverageRemote)
		case x.remote == "" && x.Source == nil && !slices.Contains(out, CoverageSource):
			out = append(out, CoverageSource)
		}
	}
	return out
}

// appliedRefs names the objects of kind (group, kind) the layers apply, as
// objectRef does.
func (l *linter) appliedRefs(group, kind string) []string {
	var out []string
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.Kind == kind && o.group() == group {
				if r := objectRef(kind, l.namespaceIn(ly, o), o.Name); !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// objectRef names an object as findings do: Kind/namespace/name, or
// Kind/name for a cluster-scoped one.
func objectRef(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

// isFluxGroup reports whether group is one of Flux's APIs (its
// Kustomizations, HelmReleases, sources, notifications, images).
func isFluxGroup(group string) bool { return strings.HasSuffix(group, ".toolkit.fluxcd.io") }

// unseenChart reports whether ly or a layer applied before it installs a
// chart lint could not render: its objects are unknown.
func (l *linter) unseenChart(ly *lintLayer) bool {
	return l.unseen(ly, func(x *lintLayer) bool { return x.hiddenChart })
}

// missingChart reports whether ly or a layer applied before it installs a
// chart lint could not get: what the chart coverage counts. A chart that
// does not render is a `chart` finding already, not a chart to give.
func (l *linter) missingChart(ly *lintLayer) bool {
	return l.unseen(ly, func(x *lintLayer) bool { return x.missingChart })
}

func (l *linter) unseen(ly *lintLayer, hides func(*lintLayer) bool) bool {
	if hides(ly) {
		return true
	}
	for a := range ly.applied.all {
		if hides(l.layers[a]) {
			return true
		}
	}
	return false
}

// makers returns the layers that create the object.
func (l *linter) makers(group, kind, ns, name string) []string {
	var out []string
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.Kind != kind || o.Name != name || o.group() != group {
				continue
			}
			if ons := l.namespaceIn(ly, o); ons == ns || ns == "" && l.isClusterScoped(o) {
				out = append(out, ly.Name)
				break
			}
		}
	}
	return out
}

// namespaceIn is the namespace a namespaced object of ly lives in: its
// own; for an object of a chart that names none, the namespace Helm
// installs the release into (the HelmRelease's spec.targetNamespace, or
// its namespace), as Helm applies it there; otherwise the layer's
// spec.targetNamespace. It is "" for a cluster-scoped object.
func (l *linter) namespaceIn(ly *lintLayer, o *object) string {
	switch {
	case o.Namespace != "" || l.isClusterScoped(o):
		return o.Namespace
	case o.release != nil:
		hrNS := namespaceOr(o.release.Namespace, namespaceOr(ly.Kustomization.Spec.TargetNamespace, ly.Kustomization.Namespace))
		return namespaceOr(yamlutil.Str(o.release.Node, "spec", "targetNamespace"), hrNS)
	}
	return ly.Kustomization.Spec.TargetNamespace
}

// isExternal reports whether the object was declared as made outside the
// platform (WithExternal).
func (l *linter) isExternal(kind, ns, name string) bool {
	return slices.ContainsFunc(slices.Concat(l.p.External, l.cfg.external), func(r layering.ObjectRef) bool {
		return r.Kind == kind && r.Name == name && (r.Namespace == ns || r.Namespace == "")
	})
}

// clusterOf names the cluster a layer applies to: "" for the cluster
// kustomize-controller runs in, or the kubeConfig it is given
// (spec.kubeConfig, a hub applying to a spoke). Rules relate only layers
// of one cluster.
func (l *linter) clusterOf(ly *lintLayer) string {
	if ly == nil {
		return ""
	}
	kc := ly.Kustomization.Spec.KubeConfig
	switch {
	case kc == nil:
		return ""
	case kc.SecretRef != nil:
		return ly.Kustomization.Namespace + "/Secret/" + kc.SecretRef.Name
	case kc.ConfigMapRef != nil:
		return ly.Kustomization.Namespace + "/ConfigMap/" + kc.ConfigMapRef.Name
	}
	return ""
}

// objectCluster names the cluster an object of ly acts on: a HelmRelease
// with spec.kubeConfig installs into that cluster, anything else into the
// layer's.
func (l *linter) objectCluster(ly *lintLayer, o *object) string {
	if o.helmCRDs != "" && o.Node != nil {
		ns := namespaceOr(o.Namespace, namespaceOr(ly.Kustomization.Spec.TargetNamespace, ly.Kustomization.Namespace))
		if name := yamlutil.Str(o.Node, "spec", "kubeConfig", "secretRef", "name"); name != "" {
			return ns + "/Secret/" + name
		}
		if name := yamlutil.Str(o.Node, "spec", "kubeConfig", "configMapRef", "name"); name != "" {
			return ns + "/ConfigMap/" + name
		}
	}
	return l.clusterOf(ly)
}

// sameCluster reports whether two layers apply to one cluster.
func (l *linter) sameCluster(a, b *lintLayer) bool { return l.clusterOf(a) == l.clusterOf(b) }

// crdValues are the values with which the charts of known operators that
// ship their CRDs as templates (not in the chart's crds/ folder, which
// install.crds governs) install them.
var crdValues = map[string][]string{
	"cert-manager": {"crds.enabled", "installCRDs"},
}

// crdsHow says how the HelmRelease hr, whose chart lint could not render,
// installs its CRDs: by a value its chart reads (cert-manager's
// crds.enabled: true), or by install.crds.
func crdsHow(hr *object) string {
	chart := path.Base(yamlutil.Str(hr.Node, "spec", "chart", "spec", "chart"))
	for _, v := range crdValues[chart] {
		if yamlutil.Str(hr.Node, append([]string{"spec", "values"}, strings.Split(v, ".")...)...) == "true" {
			return "values " + v + ": true"
		}
	}
	return "install.crds: " + hr.helmCRDs
}
