package fluxrepo

import (
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/lint"
)

// fluxInstanceGroup is flux-operator's API group.
const fluxInstanceGroup = "fluxcd.controlplane.io"

// instanceSync is what a flux-operator FluxInstance's spec.sync makes: a
// source (GitRepository, OCIRepository or Bucket) and a Kustomization of
// spec.sync.path from it, both named spec.sync.name or, as flux bootstrap
// names them, after the instance's namespace.
type instanceSync struct {
	object      *fluxbuild.Object
	source      SourceRef
	path        string
	multitenant bool
}

// fluxInstance finds the FluxInstance among objs that syncs, if any.
func fluxInstance(objs []*fluxbuild.Object) *instanceSync {
	for _, o := range objs {
		if o.Kind != "FluxInstance" || o.Group() != fluxInstanceGroup || o.Node == nil {
			continue
		}
		kind := yamlutil.Str(o.Node, "spec", "sync", "kind")
		if kind == "" {
			continue
		}
		ns := namespaceOr(o.Namespace, DefaultNamespace)
		name := namespaceOr(yamlutil.Str(o.Node, "spec", "sync", "name"), ns)
		return &instanceSync{
			object:      o,
			source:      SourceRef{Kind: kind, Namespace: ns, Name: name},
			path:        yamlutil.Str(o.Node, "spec", "sync", "path"),
			multitenant: yamlutil.Str(o.Node, "spec", "cluster", "multitenant") == "true",
		}
	}
	return nil
}

// kustomization is the Kustomization flux-operator makes for the sync.
func (s *instanceSync) kustomization() *kustomizev1.Kustomization {
	return &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.source.Name, Namespace: s.source.Namespace},
		Spec: kustomizev1.KustomizationSpec{
			Path:      "./" + cleanPath(s.path),
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: s.source.Kind, Name: s.source.Name},
		},
	}
}

// applyInstance reads the entry's FluxInstance: its sync source is the
// repository itself (unless mapped otherwise), so layers reading it are
// read from the root without --source; the Kustomization it makes is the
// root layer when it applies the entry point; and a multitenant instance
// runs the controllers with --no-cross-namespace-refs, which lint then
// checks. It returns the root layer's Kustomization, or nil.
func (r *reader) applyInstance(objs []*fluxbuild.Object, rel string) (*kustomizev1.Kustomization, *fluxbuild.Object) {
	s := fluxInstance(objs)
	if s == nil {
		return nil, nil
	}
	if _, mapped := r.cfg.sources[s.source]; !mapped {
		r.cfg.sources[s.source] = r.root
	}
	if s.multitenant {
		r.cfg.lint = append(r.cfg.lint, lint.WithNoCrossNamespaceRefs())
	}
	if s.path == "" || cleanPath(s.path) != cleanPath(rel) || r.cfg.sources[s.source] != r.root {
		return nil, nil
	}
	return s.kustomization(), s.object
}
