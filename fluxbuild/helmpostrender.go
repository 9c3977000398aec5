package fluxbuild

import (
	"bytes"
	"encoding/json"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/kustomize/api/builtins"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// postRenderer does to Helm's rendered manifest what helm-controller's
// post-renderers do, in their order: each spec.postRenderers[].kustomize
// (patches and images, in a kustomize build of the manifest), then
// spec.commonMetadata's labels and annotations, then the
// helm.toolkit.fluxcd.io/name and namespace labels, which win over
// commonMetadata.
type postRenderer struct {
	hr *helmv2.HelmRelease
}

func (p *postRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	out := in
	var err error
	for i, r := range p.hr.Spec.PostRenderers {
		if r.Kustomize == nil {
			continue
		}
		if out, err = kustomizePostRender(out, r.Kustomize); err != nil {
			return nil, fmt.Errorf("spec.postRenderers[%d].kustomize: %w", i, err)
		}
	}
	var ts []resmap.Transformer
	if cm := p.hr.Spec.CommonMetadata; cm != nil {
		if cm.Labels != nil {
			ts = append(ts, labelsTransformer(cm.Labels))
		}
		if cm.Annotations != nil {
			ts = append(ts, &builtins.AnnotationsTransformerPlugin{
				Annotations: cm.Annotations,
				FieldSpecs:  []kustypes.FieldSpec{{Path: "metadata/annotations", CreateIfNotPresent: true}},
			})
		}
		if len(ts) > 0 {
			if out, err = transformManifest(out, ts...); err != nil {
				return nil, fmt.Errorf("spec.commonMetadata: %w", err)
			}
		}
	}
	group := helmv2.GroupVersion.Group
	return transformManifest(out, labelsTransformer(map[string]string{
		group + "/name": p.hr.Name, group + "/namespace": p.hr.Namespace,
	}))
}

func labelsTransformer(labels map[string]string) resmap.Transformer {
	return &builtins.LabelTransformerPlugin{
		Labels:     labels,
		FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}},
	}
}

// transformManifest runs kustomize transformers over a manifest, as a
// resource map.
func transformManifest(in *bytes.Buffer, ts ...resmap.Transformer) (*bytes.Buffer, error) {
	rm, err := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()).NewResMapFromBytes(in.Bytes())
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if err := t.Transform(rm); err != nil {
			return nil, err
		}
	}
	b, err := rm.AsYaml()
	if err != nil {
		return nil, err
	}
	return bytes.NewBuffer(b), nil
}

// kustomizePostRender builds a kustomization holding the manifest as its
// one resource, with the post-renderer's patches and images, in memory.
func kustomizePostRender(in *bytes.Buffer, k *helmv2.Kustomize) (*bytes.Buffer, error) {
	fs := filesys.MakeFsInMemory()
	const input = "helm-output.yaml"
	kus := kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: []string{input},
	}
	for _, img := range k.Images {
		kus.Images = append(kus.Images, kustypes.Image{Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest})
	}
	for _, p := range k.Patches {
		patch := kustypes.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			patch.Target = &kustypes.Selector{
				ResId:              kustypes.Selector{}.ResId,
				AnnotationSelector: t.AnnotationSelector,
				LabelSelector:      t.LabelSelector,
			}
			patch.Target.Gvk.Group, patch.Target.Gvk.Version, patch.Target.Gvk.Kind = t.Group, t.Version, t.Kind
			patch.Target.Name, patch.Target.Namespace = t.Name, t.Namespace
		}
		kus.Patches = append(kus.Patches, patch)
	}
	data, err := json.Marshal(kus)
	if err != nil {
		return nil, err
	}
	if err := fs.WriteFile(input, in.Bytes()); err != nil {
		return nil, err
	}
	if err := fs.WriteFile("kustomization.yaml", data); err != nil {
		return nil, err
	}
	rm, err := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	}).Run(fs, ".")
	if err != nil {
		return nil, err
	}
	b, err := rm.AsYaml()
	if err != nil {
		return nil, err
	}
	return bytes.NewBuffer(b), nil
}
