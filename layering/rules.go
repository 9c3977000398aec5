package layering

import (
	"fmt"
	"slices"
	"strings"
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

func isBuiltinGroup(g string) bool {
	return builtinGroups[g] || strings.HasSuffix(g, ".toolkit.fluxcd.io")
}

// clusterScoped are the built-in kinds that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "CustomResourceDefinition": true, "StorageClass": true,
	"CSIDriver": true, "CSINode": true, "VolumeAttachment": true, "PriorityClass": true,
	"RuntimeClass": true, "IngressClass": true, "ValidatingWebhookConfiguration": true,
	"MutatingWebhookConfiguration": true, "ValidatingAdmissionPolicy": true,
	"ValidatingAdmissionPolicyBinding": true, "MutatingAdmissionPolicy": true,
	"MutatingAdmissionPolicyBinding": true, "APIService": true, "CertificateSigningRequest": true,
	"FlowSchema": true, "PriorityLevelConfiguration": true, "ClusterTrustBundle": true,
	"DeviceClass": true, "StorageVersionMigration": true,
}

// isCR is true for an object of a custom resource kind.
func isCR(o *object) bool { return !isBuiltinGroup(o.group()) }

func (ly *lintLayer) hasCRDInstallingRelease() *object { return ly.crdRelease }

func names(layers []string) string {
	q := make([]string, len(layers))
	for i, l := range layers {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, ", ")
}

// checkCRDs: every custom resource needs its CRD in an ancestor layer
// (RuleCRDOrder), and a HelmRelease that installs CRDs may not share a
// layer with custom resources that need them (RuleHelmCRDs).
func (l *linter) checkCRDs(ly *lintLayer) {
	for _, o := range ly.objects {
		if !isCR(o) {
			continue
		}
		gk := o.group() + "/" + o.kind
		defs := l.crds[gk]
		var ancestor bool
		var same bool
		var others []string
		for _, d := range defs {
			switch {
			case l.isAncestor(ly, d.layer):
				ancestor = true
			case d.layer == ly.name:
				same = true
			default:
				others = append(others, d.layer)
			}
		}
		if ancestor {
			continue
		}
		if hr := ly.hasCRDInstallingRelease(); hr != nil {
			l.objFinding(RuleHelmCRDs, ly, o, "%s installs CRDs (install.crds: %s) in the same layer as this %s, which needs one: the dry-run of the custom resource fails until the chart is installed; move the custom resources to a layer that depends on this one", hr.ref(), hr.helmCRDs, o.kind)
			continue
		}
		switch {
		case same:
			l.objFinding(RuleCRDOrder, ly, o, "the CRD of %s (%s) is only in this same layer: give the CRDs their own layer (prune: false, wait: true) and make this one depend on it", o.kind, o.group())
		case len(others) > 0:
			l.objFinding(RuleCRDOrder, ly, o, "the CRD of %s (%s) is in layer %s, which this layer does not depend on", o.kind, o.group(), names(others))
		case l.releaseInAncestor(ly):
			// A chart installed by an ancestor may bring the CRD; lint
			// cannot see into charts.
		case slices.Contains(l.b.stack.existingAPIGroups, o.group()):
		default:
			l.objFinding(RuleCRDOrder, ly, o, "no layer defines the CRD of %s (%s): add it to a layer this one depends on, or list the group in existingAPIGroups", o.kind, o.group())
		}
	}
}

func (l *linter) releaseInAncestor(ly *lintLayer) bool {
	for a := range ly.ancestors.all {
		if l.layers[a].hasCRDInstallingRelease() != nil {
			return true
		}
	}
	return false
}

// operatorsFor returns the layers that serve admission webhooks for group:
// those holding a webhook configuration for it, and operator layers (marked
// MarkOperator, or installing a HelmRelease) that directly depend on a
// layer defining the group's CRDs: the crds → operator shape of the seeds.
func (l *linter) operatorsFor(group, kind string) []*lintLayer {
	key := group + "/" + kind
	if ops, ok := l.operators[key]; ok {
		return ops
	}
	var out []*lintLayer
	crdLayers := map[string]bool{}
	for _, d := range l.crds[key] {
		crdLayers[d.layer] = true
	}
	for _, op := range l.layers {
		serves := op.webhookGroups[group] || op.webhookGroups["*"]
		if !serves && (op.operator || op.release) {
			for d := range op.direct {
				if crdLayers[d] {
					serves = true
				}
			}
		}
		if serves {
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
	for _, o := range ly.objects {
		if !isCR(o) {
			continue
		}
		for _, op := range l.operatorsFor(o.group(), o.kind) {
			if op.name == ly.name || l.isAncestor(ly, op.name) {
				continue
			}
			key := op.name + "\x00" + o.group()
			if seen[key] {
				continue
			}
			seen[key] = true
			l.objFinding(RuleWebhookOrder, ly, o, "operator layer %q serves the admission webhook of %s, but this layer does not depend on it: the custom resource races the webhook (connection refused); depend on %q, not just on the CRDs", op.name, o.group(), op.name)
		}
	}
}

// checkOperators: an operator layer must be Ready only when it serves, so
// it needs wait or health checks.
func (l *linter) checkOperators() {
	ops := map[string]bool{}
	for _, ly := range l.layers {
		if len(ly.webhookGroups) > 0 || ly.operator {
			ops[ly.name] = true
		}
	}
	for gk := range l.crds {
		group, kind, _ := strings.Cut(gk, "/")
		for _, op := range l.operatorsFor(group, kind) {
			ops[op.name] = true
		}
	}
	for _, ly := range l.layers {
		if !ops[ly.name] {
			continue
		}
		spec := &ly.ks.Spec
		if !spec.Wait && len(spec.HealthChecks) == 0 {
			l.layerFinding(RuleOperatorWait, ly, "operator layer without wait or healthChecks is Ready as soon as it is applied, before its webhook serves: set wait: true, or health checks on its workload")
		}
	}
}

// alwaysThere are namespaces no layer needs to create.
var alwaysThere = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// checkNamespaces: an object's namespace must be created by the layer
// itself (Flux applies namespaces first) or an ancestor.
func (l *linter) checkNamespaces(ly *lintLayer) {
	type hit struct {
		o     *object
		count int
	}
	missing := map[string]*hit{}
	var order []string
	for _, o := range ly.objects {
		ns := o.namespace
		if ns == "" || l.isClusterScoped(o) || slices.Contains(alwaysThere, ns) || ns == l.b.stack.namespace || slices.Contains(l.b.stack.existingNamespaces, ns) {
			continue
		}
		creators := l.namespaces[ns]
		if slices.Contains(creators, ly.name) || slices.ContainsFunc(creators, func(c string) bool { return l.isAncestor(ly, c) }) {
			continue
		}
		if h, ok := missing[ns]; ok {
			h.count++
			continue
		}
		missing[ns] = &hit{o: o}
		order = append(order, ns)
	}
	for _, ns := range order {
		h := missing[ns]
		more := ""
		if h.count > 0 {
			more = fmt.Sprintf(" (and %d more objects of this layer)", h.count)
		}
		if creators := l.namespaces[ns]; len(creators) > 0 {
			l.objFinding(RuleNamespaceOrder, ly, h.o, "namespace %q is created by layer %s, which this layer does not depend on%s", ns, names(creators), more)
		} else {
			l.objFinding(RuleNamespaceOrder, ly, h.o, "no layer creates namespace %q%s: add a Namespace to a layer this one depends on, or list it in existingNamespaces", ns, more)
		}
	}
}

func (l *linter) isClusterScoped(o *object) bool {
	if isBuiltinGroup(o.group()) {
		return clusterScoped[o.kind]
	}
	return l.scope[o.group()+"/"+o.kind] == "Cluster"
}

// checkPrune: deleting a CRD deletes every custom resource of it, so a
// layer holding CRDs must not prune.
func (l *linter) checkPrune(ly *lintLayer) {
	if !ly.ks.Spec.Prune {
		return
	}
	for _, o := range ly.objects {
		if o.crd != nil {
			l.objFinding(RuleCRDPrune, ly, o, "prune: true on a layer holding CRDs: removing the CRD from the source (or deleting the layer) deletes every %s in the cluster; use prune: false (KeepOnDelete)", o.crd.kind)
			return
		}
	}
}
