package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StackFile writes a stack file (fluxpack.dev/v1alpha1 Stack) for the
// Kustomization layers of p: the same platform, so that rendering it gives
// each Kustomization's spec as p has it. It writes every field the layer
// sets and FluxDefaults, so Flux's defaults stay Flux's; the layers' paths
// stay relative to their source, so the file belongs at the source's root.
// source is the stack's source, which layers with another one name.
// HelmRelease layers, and what a stack cannot express (a Kustomization in
// another namespace, a dependency outside p), are the caller's to report:
// the stack is written as far as it can be.
func (p *Plan) StackFile(source kustomizev1.CrossNamespaceSourceReference) ([]byte, error) {
	doc := stackDoc{APIVersion: StackAPIVersion, Kind: StackKind, Metadata: stackMeta{Name: p.Name, Namespace: p.Namespace}}
	sp := &doc.Spec
	src := source
	sp.SourceRef = &src
	sp.FluxDefaults = true
	sp.ExistingNamespaces = p.ExistingNamespaces
	sp.ExistingAPIGroups = p.ExistingAPIGroups
	sp.External = p.External
	for _, l := range p.Layers {
		if l.HelmRelease != nil {
			continue
		}
		sp.Layers = append(sp.Layers, stackLayerOf(l, source, p.Namespace))
	}
	return encodeOrdered(doc)
}

func stackLayerOf(l Layer, source kustomizev1.CrossNamespaceSourceReference, namespace string) stackLayer {
	k := l.Kustomization
	s := k.Spec
	path := s.Path
	out := stackLayer{
		Name: k.Name, Path: &path, Prune: &s.Prune, DeletionPolicy: s.DeletionPolicy,
		Interval: &metav1.Duration{Duration: s.Interval.Duration}, RetryInterval: s.RetryInterval, Timeout: s.Timeout,
		HealthChecks: s.HealthChecks, HealthCheckExprs: s.HealthCheckExprs, TargetNamespace: s.TargetNamespace,
		Components: s.Components, Patches: s.Patches, CommonMetadata: s.CommonMetadata, Force: s.Force,
		ServiceAccount: s.ServiceAccountName, Decryption: s.Decryption, Images: s.Images,
		NamePrefix: s.NamePrefix, NameSuffix: s.NameSuffix,
	}
	if s.Wait {
		out.Wait = &s.Wait
	}
	for _, d := range s.DependsOn {
		out.DependsOn = append(out.DependsOn, stackDep{Name: d.Name, ReadyExpr: d.ReadyExpr})
	}
	if pb := s.PostBuild; pb != nil {
		out.PostBuild = &stackPostBuild{Substitute: pb.Substitute, SubstituteFrom: pb.SubstituteFrom, SubstituteStrategy: pb.SubstituteStrategy}
	}
	ref := s.SourceRef
	if ref.Namespace == namespace {
		ref.Namespace = ""
	}
	if ref.Kind != source.Kind || ref.Name != source.Name || ref.Namespace != source.Namespace {
		out.SourceRef = &ref
	}
	return out
}

// encodeOrdered writes v as YAML with the fields in the order of its Go
// types (encoding/json's), where sigs.k8s.io/yaml would sort them.
func encodeOrdered(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	n, err := jsonNode(dec)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// jsonNode reads one JSON value of dec as a YAML node, keeping key order.
func jsonNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if t == '[' {
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		}
		for {
			if !dec.More() {
				if _, err := dec.Token(); err != nil { // the closing delimiter
					return nil, err
				}
				return n, nil
			}
			if n.Kind == yaml.MappingNode {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("JSON key %v is not a string", k)
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key})
			}
			c, err := jsonNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, io.ErrUnexpectedEOF
}
