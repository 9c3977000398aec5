package fluxrepo

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
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
	return repo.render(ctx, "previewing", entry, name, opts)
}

// Render prints what kustomize-controller would apply for the layer name
// of the tree (its name, or NAMESPACE/NAME outside flux-system): the
// layer's build from its source, substituted with its postBuild variables
// served by the ConfigMaps and Secrets of the tree and by opts
// (substitute.WithVarsFrom, WithSources). A layer whose source cannot be
// read offline is an error that says why.
func (repo *Repository) Render(ctx context.Context, name string, opts ...substitute.RenderOption) ([]byte, error) {
	return repo.render(ctx, "rendering", repo.Entry, name, opts)
}

func (repo *Repository) render(ctx context.Context, verb, entry, name string, opts []substitute.RenderOption) ([]byte, error) {
	var names []string
	for i, l := range repo.Plan.Layers {
		in := repo.Inputs[i]
		names = append(names, l.Name)
		if l.Name != name && kustomizationRef(l.Kustomization) != "Kustomization/"+name {
			continue
		}
		if in.Source == nil {
			return nil, fmt.Errorf("%s %s: %s", verb, kustomizationRef(l.Kustomization), in.Unavailable)
		}
		src, ok := repo.built[l.Name]
		if !ok {
			src = *in.Source
		}
		tree, err := substitute.NewSources(repo.sources()...)
		if err != nil {
			return nil, err
		}
		return fluxbuild.Preview(ctx, src, l.Kustomization, append([]substitute.RenderOption{substitute.WithSources(tree)}, opts...)...)
	}
	return nil, fmt.Errorf("%s %s: the tree of %s has no Kustomization %q (it has %s)", verb, name, entry, name, strings.Join(names, ", "))
}

// PreviewRelease reads the tree of entry and prints what helm-controller
// would install for its HelmRelease ref, as `helm template` prints it: the
// chart's CRDs that spec.install.crds applies, then the release's manifest
// (fluxbuild.RenderRelease). The chart is found as lint finds it (a folder
// of a source of the tree, or lint.WithCharts given with WithLint);
// valuesFrom is served by the ConfigMaps and Secrets of the tree and by
// fluxbuild.WithValuesFrom.
func PreviewRelease(ctx context.Context, entry string, ref layering.ObjectRef, readOpts []Option, opts ...fluxbuild.ReleaseOption) ([]byte, error) {
	repo, err := Read(ctx, entry, readOpts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	rel, err := lint.RenderRelease(ctx, repo.Plan, repo.Inputs, repo.Root, ref, repo.lint, opts...)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", ref, err)
	}
	var b bytes.Buffer
	for _, crd := range rel.CRDs {
		out, err := yaml.Marshal(crd.Node)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s", crd.File, out)
	}
	b.Write(rel.Manifest)
	return b.Bytes(), nil
}
