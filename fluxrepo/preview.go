package fluxrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/layering"
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
		tree, err := substitute.NewSources(repo.sources(l.Kustomization)...)
		if err != nil {
			return nil, err
		}
		out, err := fluxbuild.Preview(ctx, src, l.Kustomization, append([]substitute.RenderOption{substitute.WithSources(tree)}, opts...)...)
		if err != nil && i < len(repo.Views) && repo.Views[i] != nil && repo.Views[i].files != nil {
			// A laid-out artifact's folder is named by the source, as
			// in the Read's own build errors.
			err = &laidOutError{err: err, dir: repo.Views[i].Dir, name: sourceOf(l.Kustomization).String()}
		}
		return out, err
	}
	return nil, fmt.Errorf("%s %s: the tree of %s has no Kustomization %q (it has %s)", verb, name, entry, name, strings.Join(names, ", "))
}

// PreviewRelease reads the tree of entry and prints what helm-controller
// would install for its HelmRelease ref, as `helm template` prints it: the
// chart's CRDs that spec.install.crds applies, then the release's manifest
// (fluxbuild.RenderRelease). The chart is found as f finds it (a folder
// of a source of the tree, a charts folder, a fetch; nil: the sources of
// the tree only); valuesFrom is served by the ConfigMaps and Secrets of
// the tree and by fluxbuild.WithValuesFrom.
func PreviewRelease(ctx context.Context, entry string, ref layering.ObjectRef, f *charts.Finder, readOpts []Option, opts ...fluxbuild.ReleaseOption) ([]byte, error) {
	repo, err := Read(ctx, entry, readOpts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	rel, err := charts.Release(ctx, repo.Plan, repo.Inputs, ref, f, opts...)
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

// varRef matches a ${var} reference (with or without a default).
var varRef = regexp.MustCompile(`\$\{([_a-zA-Z][_a-zA-Z0-9]*)`)

// RenderUnresolved renders the layer name as Render does, but where its
// spec.postBuild.substituteFrom names ConfigMaps or Secrets the tree does
// not hold (made by Terraform, say), the variables they would give are
// left as written, ${var}, instead of failing: what a comparison of two
// revisions needs, as the cluster's values are the same on both sides.
// It returns the sources it stood in for (KIND/NAMESPACE/NAME).
func (repo *Repository) RenderUnresolved(ctx context.Context, name string, opts ...substitute.RenderOption) ([]byte, []string, error) {
	i := slices.IndexFunc(repo.Plan.Layers, func(l layering.Layer) bool {
		return l.Name == name || kustomizationRef(l.Kustomization) == "Kustomization/"+name
	})
	if i < 0 {
		out, err := repo.Render(ctx, name, opts...)
		return out, nil, err
	}
	l, in := repo.Plan.Layers[i], repo.Inputs[i]
	ks := l.Kustomization
	if ks.Spec.PostBuild == nil || in.Source == nil {
		out, err := repo.Render(ctx, name, opts...)
		return out, nil, err
	}
	tree, err := substitute.NewSources(repo.sources(ks)...)
	if err != nil {
		return nil, nil, err
	}
	// The variables the present sources give, and the sources missing.
	present := ks.DeepCopy()
	var missing []kustomizev1.SubstituteReference
	for j, ref := range present.Spec.PostBuild.SubstituteFrom {
		one := present.DeepCopy()
		one.Spec.PostBuild.SubstituteFrom = []kustomizev1.SubstituteReference{ref}
		one.Spec.PostBuild.Substitute = nil
		if _, err := substitute.Vars(one, tree); errors.Is(err, substitute.ErrSourceNotFound) {
			missing = append(missing, ref)
			present.Spec.PostBuild.SubstituteFrom[j].Optional = true
		}
	}
	if len(missing) == 0 {
		out, err := repo.Render(ctx, name, opts...)
		return out, nil, err
	}
	known, err := substitute.Vars(present, tree)
	if err != nil {
		return nil, nil, err
	}
	// Every variable the layer's objects name that no present source
	// gives stands for itself, in each missing source.
	placeholders := map[string]string{}
	for _, o := range in.Objects {
		if !o.Dollar || o.Node == nil {
			continue
		}
		data, err := yaml.Marshal(o.Node)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range varRef.FindAllSubmatch(data, -1) {
			if v := string(m[1]); !hasKey(known, v) {
				placeholders[v] = "${" + v + "}"
			}
		}
	}
	var stand []runtime.Object
	var names []string
	for _, ref := range missing {
		meta := metav1.ObjectMeta{Name: ref.Name, Namespace: namespaceOr(ks.Namespace, DefaultNamespace)}
		switch ref.Kind {
		case "Secret":
			data := map[string][]byte{}
			for k, v := range placeholders {
				data[k] = []byte(v)
			}
			stand = append(stand, &corev1.Secret{ObjectMeta: meta, Data: data})
		default:
			stand = append(stand, &corev1.ConfigMap{ObjectMeta: meta, Data: maps.Clone(placeholders)})
		}
		names = append(names, ref.Kind+"/"+meta.Namespace+"/"+ref.Name)
	}
	extra, err := substitute.NewSources(stand...)
	if err != nil {
		return nil, nil, err
	}
	out, err := repo.Render(ctx, name, append([]substitute.RenderOption{substitute.WithSources(extra)}, opts...)...)
	return out, names, err
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
