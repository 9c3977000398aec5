package lint

import (
	"fmt"

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
				l.objFinding(RuleValuesFrom, ly, o, "valuesFrom %s/%s/%s is created by layer %s%s, which this layer does not depend on: helm-controller fails the release until it exists; depend on it", kind, ns, name, names(sortedKeys(makers)), assumed)
			case ly.unknown || l.anyUnknown():
				// A layer lint could not read may make it: Coverage says
				// which layers were not read.
				l.undecided(ly, CoverageSource)
			default:
				l.objFinding(RuleValuesFrom, ly, o, "valuesFrom %s/%s/%s: no layer creates it and it is not declared as made outside the platform: helm-controller fails the release until it exists. Declare it (--external %s/%s/%s) if another tool makes it, or mark it optional: true", kind, ns, name, kind, ns, name)
			}
		}
	}
}

// valueMakers returns the layers that make the ConfigMap or Secret: as an
// object, or a Secret an ExternalSecret or SealedSecret makes, or a
// ClusterExternalSecret in a namespace it selects (or may select: labels
// lint does not know).
func (l *linter) valueMakers(kind, ns, name string) (makers map[string]bool, assumed string) {
	out := map[string]bool{}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.makesIn != nil || l.namespaceIn(ly, o) != ns {
				continue // a ClusterExternalSecret's: below
			}
			if o.Kind == kind && o.APIVersion == "v1" && o.Name == name || kind == "Secret" && o.makesSecret == name {
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
