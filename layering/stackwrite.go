package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StackFile writes the stack b holds as a stack file (fluxpack.dev/v1alpha1
// Stack): LoadStack of it gives a Builder that builds the same Plan. Layers
// are written one by one with every option they were given (a layer added
// with Then names its dependency; a preset's layers are written out). It is
// how a stack made in Go (a program, Argo CD's app-of-apps, an imported
// repository) becomes a file people edit. Problems Build would refuse are
// Build's: StackFile writes what it was given.
func (b *Builder) StackFile() ([]byte, error) {
	st := &b.stack
	doc := stackDoc{APIVersion: StackAPIVersion, Kind: StackKind, Metadata: stackMeta{Name: st.name}}
	if st.namespace != DefaultNamespace {
		doc.Metadata.Namespace = st.namespace
	}
	sp := &doc.Spec
	if o := st.oci; o != nil {
		s := &stackSource{URL: o.URL, Insecure: o.Insecure, Provider: o.Provider, SecretRef: o.SecretRef, CertSecretRef: o.CertSecretRef,
			ServiceAccountName: o.ServiceAccountName, Verify: o.Verify, LayerSelector: o.LayerSelector, Interval: o.Interval, Timeout: o.Timeout, Ignore: o.Ignore}
		if r := o.Reference; r != nil {
			s.Tag, s.SemVer, s.SemverFilter, s.Digest = r.Tag, r.SemVer, r.SemverFilter, r.Digest
		}
		sp.Source = s
	}
	sp.SourceRef = st.sourceRef
	sp.FluxDefaults = st.fluxDefaults
	if st.interval != DefaultInterval {
		sp.Interval = &metav1.Duration{Duration: st.interval}
	}
	if st.retryInterval != DefaultRetryInterval {
		sp.RetryInterval = &metav1.Duration{Duration: st.retryInterval}
	}
	if st.timeout != DefaultTimeout {
		sp.Timeout = &metav1.Duration{Duration: st.timeout}
	}
	if st.renderedPath != DefaultRenderedPath {
		sp.RenderedPath = st.renderedPath
	}
	sp.ExistingNamespaces, sp.ExistingAPIGroups, sp.External = st.existingNamespaces, st.existingAPIGroups, st.external
	for _, name := range st.vars {
		v := stackVars{Name: name}
		for _, fv := range b.vars {
			if fv.Name == name {
				v.Outputs = fv.Outputs
			}
		}
		sp.Vars = append(sp.Vars, v)
	}
	for _, s := range b.steps {
		sp.Layers = append(sp.Layers, s.stackLayer())
	}
	return encodeOrdered(doc)
}

// stackLayer is the stack file's entry for a step.
func (s *step) stackLayer() stackLayer {
	l := stackLayer{
		Name: s.name, Path: s.path, DependsOnOperator: s.dependsOnOperator, Operator: s.operator,
		Wait: s.wait, Prune: s.prune, DeletionPolicy: s.deletionPolicy,
		Interval: duration(s.interval), RetryInterval: duration(s.retryInterval), Timeout: duration(s.timeout),
		HealthChecks: s.healthChecks, HealthCheckExprs: s.healthCheckExprs, TargetNamespace: s.targetNamespace,
		Components: s.components, Patches: s.patches, CommonMetadata: s.commonMetadata, Force: s.force,
		Suspend: s.suspend, SourceRef: s.sourceRef, ServiceAccount: s.serviceAccountName, Decryption: s.decryption, Images: s.images,
		NamePrefix: s.namePrefix, NameSuffix: s.nameSuffix,
	}
	for _, d := range s.dependsOn {
		l.DependsOn = append(l.DependsOn, stackDep{Name: d, ReadyExpr: s.readyExpr[d]})
	}
	if len(s.substitute) > 0 || len(s.substituteFrom) > 0 || s.substituteStrategy != "" {
		l.PostBuild = &stackPostBuild{Substitute: s.substitute, SubstituteFrom: s.substituteFrom, SubstituteStrategy: s.substituteStrategy}
	}
	if g := s.guard; g != nil {
		l.WebhookGuard = &stackGuard{Kind: string(g.kind), Name: g.name}
	}
	if h := s.helm; h != nil {
		sh := &stackHelm{ValuesFrom: h.valuesFrom, ReleaseName: h.releaseName, TargetNamespace: h.releaseNamespace,
			CRDs: string(h.crds), CreateNamespace: h.createNamespace}
		if r := h.chartRef; r != nil {
			sh.ChartRef = &stackRef{Kind: r.Kind, Name: r.Name}
		}
		if c := h.chart; c != nil {
			sh.Chart = &stackChart{Chart: c.Spec.Chart, Version: c.Spec.Version}
			if r := c.Spec.SourceRef; r != nil {
				sh.Chart.SourceRef = stackRef{Kind: r.Kind, Name: r.Name}
			}
		}
		if h.values != nil {
			_ = json.Unmarshal(h.values.Raw, &sh.Values)
		}
		l.HelmRelease = sh
	}
	return l
}

func duration(d *time.Duration) *metav1.Duration {
	if d == nil {
		return nil
	}
	return &metav1.Duration{Duration: *d}
}

// FromKustomization sets every field of a layer from a Flux Kustomization's
// spec, as Build would emit it back: path, dependsOn (names of the stack's
// layers, with readyExpr), interval, retryInterval, timeout, prune, wait,
// deletionPolicy, health checks and their expressions, targetNamespace,
// postBuild, components, patches, commonMetadata, force, suspend, sourceRef,
// serviceAccountName, decryption, images, namePrefix and nameSuffix (a
// sourceRef without a kind leaves the stack's). A
// repository's Kustomization becomes a stack layer with it (package
// fluxrepo's Import).
func FromKustomization(spec kustomizev1.KustomizationSpec) StepOption {
	return funcStep(func(s *step) {
		spec := *spec.DeepCopy()
		path := spec.Path
		s.path = &path
		for _, d := range spec.DependsOn {
			s.dependsOn = append(s.dependsOn, d.Name)
			if d.ReadyExpr != "" {
				if s.readyExpr == nil {
					s.readyExpr = map[string]string{}
				}
				s.readyExpr[d.Name] = d.ReadyExpr
			}
		}
		iv := spec.Interval.Duration
		s.interval = &iv
		if r := spec.RetryInterval; r != nil {
			d := r.Duration
			s.retryInterval = &d
		}
		if t := spec.Timeout; t != nil {
			d := t.Duration
			s.timeout = &d
		}
		s.prune, s.wait = &spec.Prune, &spec.Wait
		s.deletionPolicy = spec.DeletionPolicy
		s.healthChecks, s.healthCheckExprs = spec.HealthChecks, spec.HealthCheckExprs
		s.targetNamespace = spec.TargetNamespace
		if pb := spec.PostBuild; pb != nil {
			s.substitute, s.substituteFrom, s.substituteStrategy = pb.Substitute, pb.SubstituteFrom, pb.SubstituteStrategy
		}
		s.components, s.patches, s.commonMetadata, s.force = spec.Components, spec.Patches, spec.CommonMetadata, spec.Force
		s.suspend = spec.Suspend
		if ref := spec.SourceRef; ref.Kind != "" {
			s.sourceRef = &ref
		}
		s.serviceAccountName, s.decryption, s.images = spec.ServiceAccountName, spec.Decryption, spec.Images
		s.namePrefix, s.nameSuffix = spec.NamePrefix, spec.NameSuffix
	})
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
