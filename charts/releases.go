package charts

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// Rendered is one HelmRelease of a Plan as Releases renders it.
type Rendered struct {
	// Layer is the layer whose Kustomization applies the HelmRelease.
	Layer string
	// Ref is the HelmRelease: Kind HelmRelease, its namespace and name.
	Ref layering.ObjectRef
	// Release is what helm-controller would install, or nil with Err.
	Release *fluxbuild.Release
	// Err says why the release was not rendered; errors.Is ErrUnavailable
	// when its chart cannot be had offline.
	Err error
}

// IsRelease reports whether o is a Flux HelmRelease.
func IsRelease(o *fluxbuild.Object) bool {
	return o.Kind == helmv2.HelmReleaseKind && o.Group() == helmv2.GroupVersion.Group
}

// Decode decodes the HelmRelease o applied by layer l, in its namespace
// (ReleaseNamespace).
func Decode(o *fluxbuild.Object, l *layering.Layer) (*helmv2.HelmRelease, error) {
	var hr helmv2.HelmRelease
	if err := decodeNode(o.Node, &hr); err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	hr.Namespace = ReleaseNamespace(o, l)
	return &hr, nil
}

// ReleaseNamespace is the namespace of the HelmRelease o applied by layer
// l: its own, or the layer's targetNamespace, or the Kustomization's.
func ReleaseNamespace(o *fluxbuild.Object, l *layering.Layer) string {
	if ns := yamlutil.Str(o.Node, "metadata", "namespace"); ns != "" {
		return ns
	}
	if l.Kustomization != nil {
		return namespaceOr(l.Kustomization.Spec.TargetNamespace, l.Kustomization.Namespace)
	}
	return ""
}

// Releases renders every HelmRelease that the layers of p for which want
// returns true apply (every layer when want is nil), in the order of the
// Plan, each with the chart f finds and the values of every layer's
// ConfigMaps and Secrets (inputs, one per layer, as package fluxrepo
// reads them). A release that does not render is returned with its Err,
// not as an error: the error is for bad input and a cancelled ctx.
func Releases(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, want func(layer string) bool, f *Finder, opts ...fluxbuild.ReleaseOption) ([]Rendered, error) {
	env, err := NewEnv(p, inputs)
	if err != nil {
		return nil, err
	}
	var out []Rendered
	for i := range p.Layers {
		l := &p.Layers[i]
		if want != nil && !want(l.Name) {
			continue
		}
		for _, o := range inputs[i].Objects {
			if !IsRelease(o) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r := Rendered{Layer: l.Name, Ref: layering.ObjectRef{Kind: o.Kind, Namespace: env.namespace(o, i), Name: o.Name}}
			hr, err := Decode(o, l)
			if err != nil {
				r.Err = err
			} else {
				r.Release, _, r.Err = f.Render(ctx, hr, env, opts...)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Release renders the HelmRelease ref that a layer of p applies, as
// Releases does.
func Release(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, ref layering.ObjectRef, f *Finder, opts ...fluxbuild.ReleaseOption) (*fluxbuild.Release, error) {
	env, err := NewEnv(p, inputs)
	if err != nil {
		return nil, err
	}
	for i := range p.Layers {
		for _, o := range inputs[i].Objects {
			if IsRelease(o) && o.Kind == ref.Kind && o.Name == ref.Name && env.namespace(o, i) == namespaceOr(ref.Namespace, p.Namespace) {
				hr, err := Decode(o, &p.Layers[i])
				if err != nil {
					return nil, err
				}
				rel, _, err := f.Render(ctx, hr, env, opts...)
				return rel, err
			}
		}
	}
	return nil, fmt.Errorf("rendering %s: no layer applies it", ref)
}

// PlanEnv is the Env of a Plan's layers as read (NewEnv).
type PlanEnv struct {
	p      *layering.Plan
	inputs []fluxbuild.Input
}

// NewEnv is the Env of p's layers, one input per layer: the objects they
// apply, with their nodes, and the sources they read.
func NewEnv(p *layering.Plan, inputs []fluxbuild.Input) (*PlanEnv, error) {
	if len(inputs) != len(p.Layers) {
		return nil, errdefs.Kind(ErrInvalidOption, "plan %q: %d inputs for %d layers", p.Name, len(inputs), len(p.Layers))
	}
	return &PlanEnv{p: p, inputs: inputs}, nil
}

// namespace is the namespace of the object o of layer i: its own, or the
// layer's targetNamespace, or the Plan's.
func (e *PlanEnv) namespace(o *fluxbuild.Object, i int) string {
	target := ""
	if k := e.p.Layers[i].Kustomization; k != nil {
		target = k.Spec.TargetNamespace
	}
	return namespaceOr(o.Namespace, namespaceOr(target, e.p.Namespace))
}

// Object is the object of any layer with that kind, namespace and name.
func (e *PlanEnv) Object(kind, ns, name string) *fluxbuild.Object {
	for i, in := range e.inputs {
		target := ""
		if k := e.p.Layers[i].Kustomization; k != nil {
			target = k.Spec.TargetNamespace
		}
		for _, o := range in.Objects {
			if o.Kind == kind && o.Name == name && namespaceOr(o.Namespace, target) == ns {
				return o
			}
		}
	}
	return nil
}

// Values is the ConfigMap or Secret of any layer with that kind,
// namespace and name, decoded from its node.
func (e *PlanEnv) Values(kind, ns, name string) runtime.Object {
	o := e.Object(kind, ns, name)
	if o == nil || o.APIVersion != "v1" || o.Node == nil {
		return nil
	}
	obj, err := DecodeValues(o.Kind, o.Node)
	if err != nil {
		return nil
	}
	return obj
}

// SourceDir is where a layer reads the source of that kind, namespace and
// name.
func (e *PlanEnv) SourceDir(kind, ns, name string) string {
	for i, in := range e.inputs {
		k := e.p.Layers[i].Kustomization
		if k == nil || in.Source == nil {
			continue
		}
		ref := k.Spec.SourceRef
		if ref.Kind == kind && ref.Name == name && namespaceOr(ref.Namespace, k.Namespace) == ns {
			return in.Source.Dir
		}
	}
	return ""
}

// DecodeValues decodes the node of a ConfigMap or Secret (kind) as the API
// server stores it: a Secret's stringData in its data.
func DecodeValues(kind string, n *yaml.Node) (runtime.Object, error) {
	if kind == "Secret" {
		s := &corev1.Secret{}
		if err := decodeNode(n, s); err != nil {
			return nil, err
		}
		stringDataToData(s)
		return s, nil
	}
	cm := &corev1.ConfigMap{}
	if err := decodeNode(n, cm); err != nil {
		return nil, err
	}
	return cm, nil
}

// stringDataToData moves a Secret's stringData into its data, as the API
// server stores it.
func stringDataToData(s *corev1.Secret) {
	for k, v := range s.StringData {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = []byte(v)
	}
}

// decodeNode decodes a YAML node into a Kubernetes object.
func decodeNode(n *yaml.Node, into any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	return sigyaml.Unmarshal(b, into)
}
