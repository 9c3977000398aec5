package outputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// ManagedByLabel marks every object this package emits.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// Manifests are the objects made from IaC outputs.
type Manifests struct {
	// ConfigMap holds the plain (not sensitive) outputs, for
	// spec.postBuild.substituteFrom. Always set, maybe with no data.
	ConfigMap *corev1.ConfigMap
	// Secret holds the sensitive outputs; nil when there are none.
	Secret *corev1.Secret
	// Values are the Helm values ConfigMaps (key values.yaml) of the
	// values map, for a HelmRelease's spec.valuesFrom, in the map's order.
	Values []*corev1.ConfigMap
}

// ValuesMap says which outputs go where in which Helm values ConfigMap. It
// is read from YAML:
//
//	configMaps:
//	  - name: karpenter-values   # the ConfigMap (key values.yaml)
//	    namespace: karpenter     # optional; default: the namespace given to Render
//	    values:                  # values path: output (IaC name or variable name)
//	      settings.clusterName: cluster_name
//	      serviceAccount.annotations.eks\.amazonaws\.com/role-arn: karpenter_role_arn
//
// A path is dot-separated keys; "\." is a dot inside a key (as in
// helm --set). Values keep their type: numbers, booleans, lists and maps
// stay what the IaC tool output.
type ValuesMap struct {
	File       string
	ConfigMaps []ValuesConfigMap
}

// ValuesConfigMap is one Helm values ConfigMap of a ValuesMap.
type ValuesConfigMap struct {
	Name, Namespace string
	Line            int
	Values          []ValuesEntry
}

// ValuesEntry puts one output at one values path.
type ValuesEntry struct {
	Path   string
	Output string
	Line   int
}

// ReadValuesMap reads a ValuesMap file.
func ReadValuesMap(path string) (*ValuesMap, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading values map: %w", err)
	}
	return ParseValuesMap(path, data)
}

// ParseValuesMap parses a ValuesMap; path names it in errors.
func ParseValuesMap(path string, data []byte) (*ValuesMap, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		var le *lineError
		if errors.As(yamlSyntax(data, err), &le) {
			return nil, fileErr(path, le.line, le.err)
		}
		return nil, fileErr(path, 0, fmt.Errorf("%w: invalid YAML", ErrMalformed))
	}
	m := &ValuesMap{File: path}
	shape := func(n *yaml.Node, what string) error {
		return fileErr(path, n.Line, fmt.Errorf("%w: %s (see the ValuesMap format)", ErrWrongShape, what))
	}
	if doc.Kind == 0 {
		return m, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, shape(top, "want a map with configMaps")
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != "configMaps" {
			return nil, shape(k, fmt.Sprintf("unknown field %q", k.Value))
		}
		if v.Kind != yaml.SequenceNode {
			return nil, shape(v, "configMaps must be a list")
		}
		for _, item := range v.Content {
			if item.Kind != yaml.MappingNode {
				return nil, shape(item, "each configMaps entry must be a map with name and values")
			}
			cm := ValuesConfigMap{Line: item.Line}
			for j := 0; j+1 < len(item.Content); j += 2 {
				fk, fv := item.Content[j], item.Content[j+1]
				switch fk.Value {
				case "name":
					cm.Name = fv.Value
				case "namespace":
					cm.Namespace = fv.Value
				case "values":
					if fv.Kind != yaml.MappingNode {
						return nil, shape(fv, "values must be a map of values path to output name")
					}
					for l := 0; l+1 < len(fv.Content); l += 2 {
						p, o := fv.Content[l], fv.Content[l+1]
						if o.Kind != yaml.ScalarNode || o.Value == "" {
							return nil, shape(o, fmt.Sprintf("values path %q must name an output", p.Value))
						}
						cm.Values = append(cm.Values, ValuesEntry{Path: p.Value, Output: o.Value, Line: p.Line})
					}
				default:
					return nil, shape(fk, fmt.Sprintf("unknown field %q", fk.Value))
				}
			}
			if errs := validation.IsDNS1123Subdomain(cm.Name); len(errs) > 0 {
				return nil, fileErr(path, item.Line, fmt.Errorf("%w: ConfigMap name %q: %s", ErrWrongShape, cm.Name, strings.Join(errs, "; ")))
			}
			m.ConfigMaps = append(m.ConfigMaps, cm)
		}
	}
	return m, nil
}

// Render makes the ConfigMap and Secret for postBuild.substituteFrom,
// named name in namespace, and the Helm values ConfigMaps of values (may be
// nil). Sensitive outputs go to the Secret only; one named by the values
// map is ErrSensitiveValue, a missing one ErrMissingOutput.
func (o *Outputs) Render(name, namespace string, values *ValuesMap) (*Manifests, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("%w: name %q: %s", ErrInvalidOption, name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return nil, fmt.Errorf("%w: namespace %q: %s", ErrInvalidOption, namespace, strings.Join(errs, "; "))
	}
	m := &Manifests{ConfigMap: &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(name, namespace),
		Data:       map[string]string{},
	}}
	for _, out := range o.List {
		if !out.Sensitive {
			m.ConfigMap.Data[out.Var] = out.Value
			continue
		}
		if m.Secret == nil {
			m.Secret = &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: objectMeta(name, namespace),
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{},
			}
		}
		m.Secret.Data[out.Var] = []byte(out.Value)
	}
	if values == nil {
		return m, nil
	}
	for _, vc := range values.ConfigMaps {
		ns := vc.Namespace
		if ns == "" {
			ns = namespace
		}
		tree := &yaml.Node{Kind: yaml.MappingNode}
		for _, e := range vc.Values {
			out, ok := o.Lookup(e.Output)
			if !ok {
				return nil, fileErr(values.File, e.Line, fmt.Errorf("ConfigMap %q: values path %q: %w %q in %s", vc.Name, e.Path, ErrMissingOutput, e.Output, o.File))
			}
			if out.Sensitive {
				return nil, fileErr(values.File, e.Line, fmt.Errorf("ConfigMap %q: values path %q: output %q: %w", vc.Name, e.Path, e.Output, ErrSensitiveValue))
			}
			if err := setPath(tree, splitPath(e.Path), valueNode(out.raw)); err != nil {
				return nil, fileErr(values.File, e.Line, fmt.Errorf("ConfigMap %q: values path %q: %w", vc.Name, e.Path, err))
			}
		}
		sortNode(tree)
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(tree); err != nil {
			return nil, fmt.Errorf("encoding values of ConfigMap %q: %w", vc.Name, err)
		}
		m.Values = append(m.Values, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: objectMeta(vc.Name, ns),
			Data:       map[string]string{"values.yaml": buf.String()},
		})
	}
	return m, nil
}

func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{ManagedByLabel: "fluxpack"}}
}

// splitPath splits a values path at dots that are not escaped as "\.".
func splitPath(p string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p) && p[i+1] == '.':
			cur.WriteByte('.')
			i++
		case p[i] == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	return append(parts, cur.String())
}

func setPath(n *yaml.Node, path []string, v *yaml.Node) error {
	if slices.Contains(path, "") {
		return fmt.Errorf("%w: empty key in values path", ErrWrongShape)
	}
	for i, key := range path {
		var child *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == key {
				child = n.Content[j+1]
			}
		}
		last := i == len(path)-1
		switch {
		case child != nil && (last || child.Kind != yaml.MappingNode):
			return fmt.Errorf("%w: values path set twice or under a value", ErrDuplicateName)
		case child != nil:
			n = child
		case last:
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
		default:
			child = &yaml.Node{Kind: yaml.MappingNode}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, child)
			n = child
		}
	}
	return nil
}

// valueNode turns a decoded value into a YAML node of the same type,
// numbers verbatim.
func valueNode(v any) *yaml.Node {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(v.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.String()}
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		if strings.Contains(v, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			n.Content = append(n.Content, valueNode(e))
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range sortedKeys(v) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, valueNode(v[k]))
		}
		return n
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(v)}
}

// sortNode sorts every map of n by key, for deterministic output.
func sortNode(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		type kv struct{ k, v *yaml.Node }
		pairs := make([]kv, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, kv{n.Content[i], n.Content[i+1]})
		}
		slices.SortStableFunc(pairs, func(a, b kv) int { return strings.Compare(a.k.Value, b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
	}
	for _, c := range n.Content {
		sortNode(c)
	}
}

// objects returns the objects in output order: the ConfigMap, the Secret
// (when withSecret and there is one), then the values ConfigMaps.
func (m *Manifests) objects(withSecret bool) []any {
	objs := []any{m.ConfigMap}
	if withSecret && m.Secret != nil {
		objs = append(objs, m.Secret)
	}
	for _, v := range m.Values {
		objs = append(objs, v)
	}
	return objs
}

// YAML renders the objects that hold no sensitive value (the ConfigMap and
// the values ConfigMaps) as a YAML stream ("---" between objects), so that a
// sensitive value never reaches stdout unless SecretYAML is asked for.
func (m *Manifests) YAML() ([]byte, error) { return m.yaml(false) }

// SecretYAML is YAML with the Secret of the sensitive outputs, after the
// ConfigMap.
func (m *Manifests) SecretYAML() ([]byte, error) { return m.yaml(true) }

func (m *Manifests) yaml(withSecret bool) ([]byte, error) {
	var buf bytes.Buffer
	for i, obj := range m.objects(withSecret) {
		b, err := sigyaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", objectName(obj), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// WriteDir writes one file per object into dir (created if needed):
// <kind>-<name>.yaml, lower case, the Secret 0600 and the others 0644.
// Every file is staged beside its destination (internal/atomicfile) and
// renamed into place once all are written, so a failure to encode or write
// leaves none of them behind. It returns the paths.
func (m *Manifests) WriteDir(dir string) ([]string, error) {
	var staged []*atomicfile.Staged
	defer func() {
		for _, st := range staged {
			st.Abort() // a no-op once committed
		}
	}()
	var names, written []string
	for _, obj := range m.objects(true) {
		b, err := sigyaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", objectName(obj), err)
		}
		kind, name, mode := "configmap", "", os.FileMode(0o644)
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			name = o.Name
		case *corev1.Secret:
			kind, name, mode = "secret", o.Name, 0o600
		}
		base := kind + "-" + name + ".yaml"
		if slices.Contains(names, base) {
			return nil, fmt.Errorf("%w: two objects would be written to %s", ErrDuplicateName, base)
		}
		dst := filepath.Join(dir, base)
		st, err := atomicfile.Stage(dst, b, mode)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", dst, err)
		}
		staged = append(staged, st)
		names = append(names, base)
	}
	for i, st := range staged {
		dst := filepath.Join(dir, names[i])
		if err := st.Commit(); err != nil {
			return written, fmt.Errorf("writing %s: %w", dst, err)
		}
		written = append(written, dst)
	}
	return written, nil
}

func objectName(obj any) string {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap/" + o.Namespace + "/" + o.Name
	case *corev1.Secret:
		return "Secret/" + o.Namespace + "/" + o.Name
	}
	return fmt.Sprintf("%T", obj)
}

// Spec names what RenderFile makes: the ConfigMap and Secret Name in
// Namespace and, with a ValuesMap file, its Helm values ConfigMaps.
type Spec struct {
	Name      string
	Namespace string
	ValuesMap string // a ValuesMap file, or ""
}

// DefaultSpec is the Spec of the variables name in flux-system, without a
// values map.
func DefaultSpec(name string) Spec { return Spec{Name: name, Namespace: "flux-system"} }

// RenderFile reads the outputs file at path and renders its manifests as
// spec says (Read, ReadValuesMap, Outputs.Render).
func RenderFile(path string, spec Spec, opts ...ReadOption) (*Manifests, error) {
	outs, err := Read(path, opts...)
	if err != nil {
		return nil, err
	}
	var vm *ValuesMap
	if spec.ValuesMap != "" {
		if vm, err = ReadValuesMap(spec.ValuesMap); err != nil {
			return nil, err
		}
	}
	return outs.Render(spec.Name, spec.Namespace, vm)
}
