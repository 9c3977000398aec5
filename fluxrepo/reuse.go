package fluxrepo

import (
	"reflect"
	"slices"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
)

// WithReuse reads a second revision of a repository prev was read from:
// a layer of prev not named in changed, read from the repository itself
// (not a fetched or laid-out source) with the same Kustomization spec,
// whose build succeeded and holds no ResourceSet, takes prev's objects
// instead of being built again. changed must name every layer whose input
// files differ between the two revisions (package review's Affected), so
// that what is reused is what a build would give. The objects are shared:
// neither Repository may change them. prev must stay open while the new
// Repository is used.
func WithReuse(prev *Repository, changed map[string]bool) Option {
	return funcOption(func(c *config) error {
		if prev == nil || prev.Plan == nil {
			return errdefs.InvalidOption("WithReuse: no previous Repository")
		}
		c.reuse, c.changed = prev, changed
		return nil
	})
}

// reusable returns the objects WithReuse's Repository built for layer
// name, when they are what building it here would give.
func (r *reader) reusable(name string, k *kustomizev1.Kustomization, src *fluxbuild.Source, gen *generator) ([]*fluxbuild.Object, bool) {
	prev := r.cfg.reuse
	if prev == nil || r.cfg.changed[name] || gen != nil || src.Dir != r.root {
		return nil, false
	}
	i := slices.IndexFunc(prev.Plan.Layers, func(l layering.Layer) bool { return l.Name == name })
	if i < 0 || i >= len(prev.Inputs) {
		return nil, false
	}
	in, l := prev.Inputs[i], prev.Plan.Layers[i]
	if !in.Built || in.BuildErr != nil || in.Source == nil || in.Source.Dir != prev.Root || l.Kustomization == nil {
		return nil, false
	}
	if b, ok := prev.built[name]; !ok || b.Dir != prev.Root || b.Ignore != src.Ignore || b.Packed != src.Packed {
		return nil, false
	}
	if !reflect.DeepEqual(l.Kustomization.Spec, k.Spec) || l.Kustomization.Namespace != k.Namespace {
		return nil, false
	}
	for _, o := range in.Objects {
		if o.Kind == "ResourceSet" && o.Group() == fluxInstanceGroup {
			return nil, false // its notes are the build's
		}
	}
	return in.Objects, true
}
