package stackfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/layering"
)

// Marshal writes the stack b holds as a stack file (fluxpack.dev/v1alpha1
// Stack): Load of it gives a Builder that builds the same Plan. Layers
// are written one by one with every option they were given (a layer added
// with Then names its dependency; a preset's layers are written out). It is
// how a stack made in Go (a program, Argo CD's app-of-apps, an imported
// repository) becomes a file people edit. Problems Build would refuse are
// Build's: Marshal writes what it was given.
func Marshal(b *layering.Builder) ([]byte, error) {
	st := b.Settings()
	doc := Doc{APIVersion: APIVersion, Kind: Kind, Metadata: stackMeta{Name: st.Name}}
	if st.Namespace != layering.DefaultNamespace {
		doc.Metadata.Namespace = st.Namespace
	}
	sp := &doc.Spec
	if o := st.OCI; o != nil {
		s := &stackSource{URL: o.URL, Insecure: o.Insecure, Provider: o.Provider, SecretRef: o.SecretRef, CertSecretRef: o.CertSecretRef,
			ServiceAccountName: o.ServiceAccountName, Verify: o.Verify, LayerSelector: o.LayerSelector, Interval: o.Interval, Timeout: o.Timeout, Ignore: o.Ignore}
		if r := o.Reference; r != nil {
			s.Tag, s.SemVer, s.SemverFilter, s.Digest = r.Tag, r.SemVer, r.SemverFilter, r.Digest
		}
		sp.Source = s
	}
	sp.SourceRef = st.SourceRef
	sp.FluxDefaults = st.FluxDefaults
	if st.Interval != layering.DefaultInterval {
		sp.Interval = &metav1.Duration{Duration: st.Interval}
	}
	if st.RetryInterval != layering.DefaultRetryInterval {
		sp.RetryInterval = &metav1.Duration{Duration: st.RetryInterval}
	}
	if st.Timeout != layering.DefaultTimeout {
		sp.Timeout = &metav1.Duration{Duration: st.Timeout}
	}
	if st.RenderedPath != layering.DefaultRenderedPath {
		sp.RenderedPath = st.RenderedPath
	}
	sp.ExistingNamespaces, sp.ExistingAPIGroups, sp.External = st.ExistingNamespaces, st.ExistingAPIGroups, st.External
	for _, v := range st.Vars {
		sp.Vars = append(sp.Vars, stackVars{Name: v.Name, Outputs: v.Outputs})
	}
	for _, l := range st.Layers {
		sp.Layers = append(sp.Layers, layerOf(&l))
	}
	return encodeOrdered(doc)
}

// layerOf is the stack file's entry for a layer.
func layerOf(s *layering.LayerSettings) Layer {
	l := Layer{
		Name: s.Name, Path: s.Path, DependsOnOperator: s.DependsOnOperator, Operator: s.Operator,
		Wait: s.Wait, Prune: s.Prune, DeletionPolicy: s.DeletionPolicy,
		Interval: duration(s.Interval), RetryInterval: duration(s.RetryInterval), Timeout: duration(s.Timeout),
		HealthChecks: s.HealthChecks, HealthCheckExprs: s.HealthCheckExprs, TargetNamespace: s.TargetNamespace,
		Components: s.Components, Patches: s.Patches, CommonMetadata: s.CommonMetadata, Force: s.Force,
		Suspend: s.Suspend, SourceRef: s.SourceRef, ServiceAccount: s.ServiceAccountName, Decryption: s.Decryption, Images: s.Images,
		NamePrefix: s.NamePrefix, NameSuffix: s.NameSuffix,
	}
	for _, d := range s.DependsOn {
		l.DependsOn = append(l.DependsOn, stackDep{Name: d, ReadyExpr: s.ReadyExpr[d]})
	}
	if len(s.Substitute) > 0 || len(s.SubstituteFrom) > 0 || s.SubstituteStrategy != "" {
		l.PostBuild = &stackPostBuild{Substitute: s.Substitute, SubstituteFrom: s.SubstituteFrom, SubstituteStrategy: s.SubstituteStrategy}
	}
	if s.WebhookGuardKind != "" || s.WebhookGuardName != "" {
		l.WebhookGuard = &stackGuard{Kind: string(s.WebhookGuardKind), Name: s.WebhookGuardName}
	}
	if h := s.HelmRelease; h != nil {
		sh := &stackHelm{ValuesFrom: h.ValuesFrom, ReleaseName: h.ReleaseName, TargetNamespace: h.ReleaseNamespace,
			CRDs: string(h.CRDs), CreateNamespace: h.CreateNamespace}
		if r := h.ChartRef; r != nil {
			sh.ChartRef = &stackRef{Kind: r.Kind, Name: r.Name}
		}
		if c := h.Chart; c != nil {
			sh.Chart = &stackChart{Chart: c.Spec.Chart, Version: c.Spec.Version}
			if r := c.Spec.SourceRef; r != nil {
				sh.Chart.SourceRef = stackRef{Kind: r.Kind, Name: r.Name}
			}
		}
		if h.Values != nil {
			_ = json.Unmarshal(h.Values.Raw, &sh.Values)
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
