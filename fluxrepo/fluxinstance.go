package fluxrepo

import (
	"fmt"
	"os"
	"path/filepath"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
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
	url         string // spec.sync.url
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
			url:         yamlutil.Str(o.Node, "spec", "sync", "url"),
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
// checks. It returns the root layer's Kustomization, or nil, and the
// instance, or nil.
func (r *reader) applyInstance(objs []*fluxbuild.Object, rel string) (*kustomizev1.Kustomization, *instanceSync) {
	s := fluxInstance(objs)
	if s == nil {
		s = r.cfg.instance
	}
	if s == nil {
		return nil, nil
	}
	r.instance = s
	if _, mapped := r.cfg.sources[s.source]; !mapped {
		r.cfg.sources[s.source] = r.root
	}
	if s.multitenant {
		r.multitenant = true
	}
	if s.path == "" || cleanPath(s.path) != cleanPath(rel) || r.cfg.sources[s.source] != r.root {
		return nil, s
	}
	return s.kustomization(), s
}

// syncedTree makes the root layer of an entry point that holds a
// FluxInstance syncing another path (the instance's own folder, applied by
// a bootstrap step): the Kustomization the instance makes, built from
// spec.sync.path where the repository (or the directory its source is
// mapped to) holds it; where it does not, the layer is there with what it
// syncs named, its objects unknown. The objects of the entry point are
// the bootstrap's, not Flux's.
func (r *reader) syncedTree(s *instanceSync) {
	k := s.kustomization()
	l := layer{Layer: layering.Layer{Name: r.layerName(k), Kustomization: k, File: s.object.File, Line: s.object.Line}}
	res, why, _ := r.resolve(k)
	src := res.src
	l.view = res.view
	if src != nil {
		if fi, err := os.Stat(filepath.Join(src.Dir, filepath.FromSlash(cleanPath(s.path)))); err != nil || !fi.IsDir() {
			at := "this repository"
			if src.Dir != r.root {
				at = src.Dir
			}
			from := s.source.String()
			if s.url != "" {
				from += " (" + s.url + ")"
			}
			src, why = nil, fmt.Sprintf("%s syncs %s from %s, which %s does not hold: lint the repository that does, or map the source to its directory with --source %s=DIR",
				kindRef(s.object), k.Spec.Path, from, at, s.source)
		}
	}
	if src == nil {
		l.Unavailable = why
		r.add(l, "")
		return
	}
	objs, err := fluxbuild.Build(r.ctx, *src, k, r.buildOptions()...)
	if err == nil {
		objs = r.withGenerated(objs)
		r.collect(objs)
	}
	l.Source, l.Built, l.Objects, l.BuildErr = src, true, objs, err
	r.add(l, "")
}

// kindRef names an object Kind/namespace/name, its namespace defaulted.
func kindRef(o *fluxbuild.Object) string {
	return o.Kind + "/" + namespaceOr(o.Namespace, DefaultNamespace) + "/" + o.Name
}
