package fluxrepo

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/substitute"
)

// Preview reads the tree of entry (Read) and prints what
// kustomize-controller would apply for its Kustomization name (NAME, or
// NAMESPACE/NAME outside flux-system): fluxbuild.Preview from the layer's
// source, its substituteFrom served by the ConfigMaps and Secrets of the
// tree and by opts (substitute.WithVarsFrom, WithSources).
func Preview(ctx context.Context, entry, name string, readOpts []Option, opts ...substitute.RenderOption) ([]byte, error) {
	repo, err := Read(ctx, entry, readOpts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	var names []string
	for _, l := range repo.Plan.Layers {
		names = append(names, l.Name)
		if l.Name != name && kustomizationRef(l.Kustomization) != "Kustomization/"+name {
			continue
		}
		if l.Source == nil {
			return nil, fmt.Errorf("previewing %s: %s", kustomizationRef(l.Kustomization), l.Unavailable)
		}
		src, ok := repo.built[l.Name]
		if !ok {
			src = *l.Source
		}
		tree, err := substitute.NewSources(repo.sources()...)
		if err != nil {
			return nil, err
		}
		return fluxbuild.Preview(ctx, src, l.Kustomization, append([]substitute.RenderOption{substitute.WithSources(tree)}, opts...)...)
	}
	return nil, fmt.Errorf("previewing %s: the tree of %s has no Kustomization %q (it has %s)", name, entry, name, strings.Join(names, ", "))
}
