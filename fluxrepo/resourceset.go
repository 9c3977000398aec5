package fluxrepo

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/kinds"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// resourceSetReconcile is flux-operator's annotation that, set to
// "disabled" on a generated object, leaves it out.
const resourceSetReconcile = "fluxcd.controlplane.io/reconcile"

// expandResourceSets returns the objects flux-operator generates from the
// ResourceSets among objs, as its templating makes them: spec.resources
// and spec.resourcesTemplate rendered once per input of spec.inputs
// (once, with no inputs, when there are none), with the << >> delimiters
// and sprig's functions; commonMetadata set; objects annotated
// fluxcd.controlplane.io/reconcile: disabled left out; duplicates (same
// apiVersion, kind, namespace and name) made once; a namespaced object
// without a namespace put in the ResourceSet's. A ResourceSet whose inputs
// come only from providers (spec.inputsFrom) is not expanded: its inputs
// are not known offline. Each generated object is named by the
// ResourceSet's file and line. The error names the ResourceSet whose
// templates do not render.
func expandResourceSets(objs []*fluxbuild.Object) ([]*fluxbuild.Object, error) {
	var out []*fluxbuild.Object
	var errs []error
	for _, o := range objs {
		if o.Kind != "ResourceSet" || o.Group() != fluxInstanceGroup || o.Node == nil {
			continue
		}
		gen, _, err := expandResourceSet(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o, err))
			continue
		}
		out = append(out, gen...)
	}
	return out, errors.Join(errs...)
}

// ErrProviderInputs is wrapped by the error of a ResourceSet whose inputs
// come, in part or whole, from ResourceSetInputProviders (spec.inputsFrom):
// only the cluster knows them, so what it generates is not known offline.
var ErrProviderInputs = errors.New("its inputs come from ResourceSetInputProviders (spec.inputsFrom), which only the cluster knows")

// Generated is what one flux-operator ResourceSet generates.
type Generated struct {
	// ResourceSet names it: ResourceSet/NAMESPACE/NAME.
	ResourceSet string
	// Objects are the objects it generates, a YAML stream (nil when it
	// generates none, or Err).
	Objects []byte
	// Err says why its objects are not known: templates that do not
	// render, or inputs from providers (ErrProviderInputs).
	Err error
}

// ExpandResourceSets returns, for each flux-operator ResourceSet
// (fluxcd.controlplane.io) of rendered, a layer's objects as Render prints
// them, the objects flux-operator generates from it, in the order the
// ResourceSets come: its resources and resourcesTemplate rendered once per
// input of spec.inputs, as the reader expands them for lint (the <<
// >> delimiters, sprig's functions, commonMetadata, objects annotated
// fluxcd.controlplane.io/reconcile: disabled left out, a namespaced object
// without a namespace put in the ResourceSet's). A ResourceSet whose inputs
// come from providers is not expanded: its Err wraps ErrProviderInputs.
// The error is for a stream that does not parse.
func ExpandResourceSets(rendered []byte) ([]Generated, error) {
	if !bytes.Contains(rendered, []byte(fluxInstanceGroup)) {
		return nil, nil
	}
	var out []Generated
	for doc, err := range yamlutil.Documents(bytes.NewReader(rendered)) {
		if err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		rs := &fluxbuild.Object{
			APIVersion: yamlutil.Str(root, "apiVersion"), Kind: yamlutil.Str(root, "kind"),
			Namespace: yamlutil.Str(root, "metadata", "namespace"), Name: yamlutil.Str(root, "metadata", "name"), Node: root,
		}
		if rs.Kind != "ResourceSet" || rs.Group() != fluxInstanceGroup {
			continue
		}
		g := Generated{ResourceSet: "ResourceSet/" + namespaceOr(rs.Namespace, DefaultNamespace) + "/" + rs.Name}
		objs, fromProviders, err := expandResourceSet(rs)
		switch {
		case err != nil:
			g.Err = fmt.Errorf("its templates do not render as flux-operator renders them: %w", err)
		case fromProviders:
			g.Err = ErrProviderInputs
		}
		if g.Err == nil {
			var b bytes.Buffer
			for _, o := range objs {
				data, err := yaml.Marshal(o.Node)
				if err != nil {
					return nil, err
				}
				b.WriteString("---\n")
				b.Write(data)
			}
			if b.Len() > 0 {
				g.Objects = b.Bytes()
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// expandResourceSet returns the objects the ResourceSet rs generates from
// its own inputs; fromProviders is true when some of its inputs come from
// providers (spec.inputsFrom), which only the cluster knows: the objects
// are then those of spec.inputs alone.
func expandResourceSet(rs *fluxbuild.Object) (objs []*fluxbuild.Object, fromProviders bool, err error) {
	var spec struct {
		Inputs            []map[string]any `yaml:"inputs"`
		InputsFrom        []any            `yaml:"inputsFrom"`
		Resources         []any            `yaml:"resources"`
		ResourcesTemplate string           `yaml:"resourcesTemplate"`
		CommonMetadata    struct {
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"commonMetadata"`
	}
	if n := yamlutil.Field(rs.Node, "spec"); n != nil {
		if err := n.Decode(&spec); err != nil {
			return nil, false, err
		}
	}
	fromProviders = len(spec.InputsFrom) > 0
	inputs := spec.Inputs
	if len(inputs) == 0 {
		if fromProviders {
			return nil, true, nil // only the providers know the inputs
		}
		inputs = []map[string]any{{}}
	}
	var templates []string
	for _, r := range spec.Resources {
		data, err := yaml.Marshal(r)
		if err != nil {
			return nil, fromProviders, err
		}
		templates = append(templates, string(data))
	}
	if spec.ResourcesTemplate != "" {
		templates = append(templates, spec.ResourcesTemplate)
	}
	funcs := sprig.TxtFuncMap()
	funcs["slugify"] = slugify
	seen := map[string]bool{}
	var out []*fluxbuild.Object
	for _, in := range inputs {
		// Templates name the input as inputs.KEY: a function, as
		// flux-operator defines it.
		funcs["inputs"] = func() map[string]any { return in }
		for i, text := range templates {
			t, err := template.New(fmt.Sprintf("resource %d", i+1)).Delims("<<", ">>").Funcs(funcs).Option("missingkey=error").Parse(text)
			if err != nil {
				return nil, fromProviders, err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, map[string]any{"inputs": in}); err != nil {
				return nil, fromProviders, err
			}
			for doc, err := range yamlutil.Documents(&b) {
				if err != nil {
					return nil, fromProviders, err
				}
				if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
					continue
				}
				o, key := generated(rs, doc, spec.CommonMetadata.Labels, spec.CommonMetadata.Annotations)
				if o == nil || seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, o)
			}
		}
	}
	return out, fromProviders, nil
}

// generated makes the object of a rendered document, or nil when it is
// left out; key identifies it for deduplication.
func generated(rs *fluxbuild.Object, doc *yaml.Node, labels, annotations map[string]string) (*fluxbuild.Object, string) {
	var meta struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name        string            `yaml:"name"`
			Namespace   string            `yaml:"namespace"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"metadata"`
	}
	if doc.Decode(&meta) != nil || meta.Kind == "" || meta.Metadata.Name == "" {
		return nil, ""
	}
	if meta.Metadata.Annotations[resourceSetReconcile] == "disabled" {
		return nil, ""
	}
	ns := meta.Metadata.Namespace
	if ns == "" && !clusterScopedKind(meta.Kind) {
		ns = namespaceOr(rs.Namespace, DefaultNamespace)
		setMeta(doc, "namespace", ns)
	}
	if len(labels) > 0 || len(annotations) > 0 {
		l := maps.Clone(meta.Metadata.Labels)
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, labels)
		a := maps.Clone(meta.Metadata.Annotations)
		if a == nil {
			a = map[string]string{}
		}
		maps.Copy(a, annotations)
		if len(labels) > 0 {
			setMetaMap(doc, "labels", l)
		}
		if len(annotations) > 0 {
			setMetaMap(doc, "annotations", a)
		}
	}
	data, _ := yaml.Marshal(doc)
	root := doc.Content[0]
	return &fluxbuild.Object{
		APIVersion: meta.APIVersion, Kind: meta.Kind, Namespace: ns, Name: meta.Metadata.Name,
		File: rs.File, Line: rs.Line, Node: root, Built: true, Dollar: bytes.ContainsRune(data, '$'),
	}, meta.APIVersion + "/" + meta.Kind + "/" + ns + "/" + meta.Metadata.Name
}

// setMeta sets metadata.<key> of doc to a string.
func setMeta(doc *yaml.Node, key, value string) {
	md := metadataNode(doc)
	if n := yamlutil.Field(md, key); n != nil {
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", value
		return
	}
	md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// setMetaMap sets metadata.<key> of doc to a map of strings.
func setMetaMap(doc *yaml.Node, key string, m map[string]string) {
	var v yaml.Node
	if v.Encode(m) != nil {
		return
	}
	md := metadataNode(doc)
	for i := 0; i+1 < len(md.Content); i += 2 {
		if md.Content[i].Value == key {
			md.Content[i+1] = &v
			return
		}
	}
	md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &v)
}

func metadataNode(doc *yaml.Node) *yaml.Node {
	root := doc.Content[0]
	if md := yamlutil.Field(root, "metadata"); md != nil && md.Kind == yaml.MappingNode {
		return md
	}
	md := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "metadata"}, md)
	return md
}

// clusterScopedKind reports whether Kubernetes defines kind as
// cluster-scoped, or it is one of the cluster-scoped custom resources
// ResourceSets commonly render.
func clusterScopedKind(kind string) bool {
	switch kind {
	case "ClusterIssuer", "ClusterSecretStore", "ClusterPolicy":
		return true
	}
	return kinds.ClusterScoped(kind)
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slugify is flux-operator's template function: lower case, runs of
// other characters one dash, no dash at either end, at most 63
// characters (a label value).
func slugify(s string) string {
	s = strings.Trim(notSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}
