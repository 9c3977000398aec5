package lint

import (
	"fmt"
	"strings"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// checkReleases: the ConfigMaps and Secrets a HelmRelease reads its values
// from (spec.valuesFrom, not optional) must exist when helm-controller
// reconciles it: made by the release's own layer (applied with it), a
// layer applied before, or outside the platform. Otherwise helm-controller
// fails the release ("could not resolve … chart values reference") until
// they appear, and for good when nothing makes them (RuleValuesFrom). The
// chart is not needed to tell.
func (l *linter) checkReleases(ly *lintLayer) {
	for _, o := range ly.objects {
		if o.helmCRDs == "" || o.Node == nil {
			continue
		}
		ns := o.Namespace
		if ns == "" {
			ns = namespaceOr(ly.Kustomization.Spec.TargetNamespace, ly.Kustomization.Namespace)
		}
		l.checkReleaseDependsOn(ly, o, ns)
		for _, v := range contentOf(yamlutil.Field(yamlutil.Field(o.Node, "spec"), "valuesFrom")) {
			kind, name := yamlutil.Str(v, "kind"), yamlutil.Str(v, "name")
			if (kind != "ConfigMap" && kind != "Secret") || name == "" || yamlutil.Str(v, "optional") == "true" {
				continue
			}
			if l.isExternal(kind, ns, name) {
				continue
			}
			makers, assumed := l.valueMakers(kind, ns, name)
			switch {
			case makers[ly.Name] || l.anyApplied(ly, makers):
			case len(makers) > 0:
				l.objEdge(RuleValuesFrom, ly, o, sortedKeys(makers), "valuesFrom %s/%s/%s is created by layer %s%s, which this layer does not depend on: helm-controller fails the release until it exists; depend on it", kind, ns, name, names(sortedKeys(makers)), assumed)
			case len(l.unreadCauses()) > 0:
				// A layer lint could not read may make it: Coverage says
				// which layers were not read.
				for _, cause := range l.unreadCauses() {
					l.undecided(ly, cause)
				}
			default:
				l.objFinding(RuleValuesFrom, ly, o, "valuesFrom %s/%s/%s: no layer creates it and it is not declared as made outside the platform: helm-controller fails the release until it exists. Declare it (--external %s/%s/%s) if another tool makes it, or mark it optional: true", kind, ns, name, kind, ns, name)
			}
		}
	}
}

// valueMakers returns the layers that make the ConfigMap or Secret: as an
// object, or a Secret an ExternalSecret or SealedSecret makes, a Secret or
// ConfigMap an ObjectBucketClaim's provisioner makes, or a
// ClusterExternalSecret in a namespace it selects (or may select: labels
// lint does not know).
func (l *linter) valueMakers(kind, ns, name string) (makers map[string]bool, assumed string) {
	out := map[string]bool{}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.makesIn != nil || l.namespaceIn(ly, o) != ns {
				continue // a ClusterExternalSecret's: below
			}
			if o.Kind == kind && o.APIVersion == "v1" && o.Name == name || kind == "Secret" && o.makesSecret == name || kind == "ConfigMap" && o.makesConfigMap == name {
				out[ly.Name] = true
			}
		}
	}
	if kind == "Secret" {
		for _, m := range l.clusterSecretMakers(ns, name) {
			out[m.layer] = true
			if m.assumed != "" && assumed == "" {
				assumed = fmt.Sprintf(" (assumed: %s selects namespaces by labels, and lint does not know those of %s)", m.assumed, ns)
			}
		}
	}
	return out, assumed
}

// anyApplied reports whether one of the named layers is applied before ly.
func (l *linter) anyApplied(ly *lintLayer, layers map[string]bool) bool {
	for name := range layers {
		if l.isApplied(ly, name) {
			return true
		}
	}
	return false
}

// checkReleaseDependsOn: helm-controller holds a HelmRelease until every
// HelmRelease of its spec.dependsOn exists and is Ready, so one no layer
// applies holds it for good (RuleGraph), with a "did you mean" when a
// release of a close name is applied. ns is the release's namespace, the
// default of a dependency's.
func (l *linter) checkReleaseDependsOn(ly *lintLayer, o *object, ns string) {
	const group = "helm.toolkit.fluxcd.io"
	for _, d := range contentOf(yamlutil.Field(yamlutil.Field(o.Node, "spec"), "dependsOn")) {
		name, dns := yamlutil.Str(d, "name"), namespaceOr(yamlutil.Str(d, "namespace"), ns)
		if name == "" || strings.ContainsAny(name+dns, "${") || l.isExternal("HelmRelease", dns, name) {
			continue
		}
		if makers := l.makers(group, "HelmRelease", dns, name); len(makers) > 0 {
			continue
		}
		ref := objectRef("HelmRelease", dns, name)
		l.missingObject(ly, group, "HelmRelease", ref, func(near, assumed string) {
			l.objFinding(RuleGraph, ly, o, "dependsOn %s: no layer applies this HelmRelease%s%s: helm-controller holds the release until it exists, so it is never installed; fix the name", ref, near, assumed)
		})
	}
}
