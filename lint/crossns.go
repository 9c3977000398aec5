package lint

import (
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// WithNoCrossNamespaceRefs lints for controllers run with
// --no-cross-namespace-refs (Flux's multi-tenancy lockdown): a reference
// to a source in another namespace is refused (RuleCrossNamespace).
func WithNoCrossNamespaceRefs() Option {
	return funcLint(func(c *config) error {
		c.noCrossNamespaceRefs = true
		return nil
	})
}

// WithNoRemoteBases lints for a kustomize-controller run with
// --no-remote-bases: a kustomization naming a remote resource (a URL or a
// Git repository) fails the build, a path finding. By default
// kustomize-controller fetches it, and lint, which does not, reports the
// layer as not checked (CoverageRemote).
func WithNoRemoteBases() Option {
	return funcLint(func(c *config) error {
		c.noRemoteBases = true
		return nil
	})
}

// checkCrossNamespace: with --no-cross-namespace-refs, kustomize-controller
// refuses a Kustomization whose spec.sourceRef is in another namespace
// ("cross-namespace references have been blocked"), and helm-controller a
// HelmRelease whose spec.chartRef, or the HelmChart its spec.chart makes
// in the namespace of spec.chart.spec.sourceRef, is ("cross-namespace
// references are not allowed"). Either stalls for good.
func (l *linter) checkCrossNamespace(ly *lintLayer) {
	if !l.cfg.noCrossNamespaceRefs {
		return
	}
	ks := ly.Kustomization
	ksNS := namespaceOr(ks.Namespace, l.p.Namespace)
	if ref := ks.Spec.SourceRef; ref.Namespace != "" && ref.Namespace != ksNS && ly.HelmRelease == nil {
		l.layerFinding(RuleCrossNamespace, ly, "spec.sourceRef %s/%s/%s is in another namespace than the Kustomization (%s): with --no-cross-namespace-refs kustomize-controller refuses it (\"can't access '%s/%s/%s', cross-namespace references have been blocked\") and the layer never applies; put the source in %s",
			ref.Kind, ref.Namespace, ref.Name, ksNS, ref.Kind, ref.Namespace, ref.Name, ksNS)
	}
	for _, o := range ly.objects {
		if o.helmCRDs == "" || o.Node == nil {
			continue
		}
		ns := namespaceOr(o.Namespace, namespaceOr(ks.Spec.TargetNamespace, ksNS))
		spec := yamlutil.Field(o.Node, "spec")
		for _, path := range [][]string{{"chartRef"}, {"chart", "spec", "sourceRef"}} {
			n := spec
			for _, k := range path {
				n = yamlutil.Field(n, k)
			}
			refNS := yamlutil.Str(n, "namespace")
			if n == nil || refNS == "" || refNS == ns {
				continue
			}
			field := "spec.chartRef"
			if len(path) > 1 {
				field = "spec.chart.spec.sourceRef"
			}
			l.objFinding(RuleCrossNamespace, ly, o, "%s %s/%s/%s is in another namespace than the HelmRelease (%s): with --no-cross-namespace-refs helm-controller refuses it (\"cross-namespace references are not allowed\") and the release never installs; put the source in %s",
				field, yamlutil.Str(n, "kind"), refNS, yamlutil.Str(n, "name"), ns, ns)
		}
	}
}
