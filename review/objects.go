package review

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Object is one Kubernetes object a Flux producer (a Kustomization, a
// HelmRelease, or a flux-operator ResourceSet) applies, as rendered.
type Object struct {
	// Producer is what applies the object: Kustomization/NAMESPACE/NAME,
	// HelmRelease/NAMESPACE/NAME or ResourceSet/NAMESPACE/NAME.
	Producer string `json:"producer"`
	// ID names the object.
	ID ObjectID `json:"id"`
	// Value is the object as JSON-compatible values (maps, slices,
	// strings, float64/int64, bools, nil).
	Value map[string]any `json:"-"`
}

// ObjectID names an object: its API group, kind, namespace and name.
type ObjectID struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String prints KIND/NAMESPACE/NAME (KIND.GROUP for grouped kinds; no
// namespace for cluster-scoped objects).
func (id ObjectID) String() string {
	k := id.Kind
	if id.Group != "" {
		k += "." + id.Group
	}
	if id.Namespace == "" {
		return k + "/" + id.Name
	}
	return k + "/" + id.Namespace + "/" + id.Name
}

func compareIDs(a, b ObjectID) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// ParseObjects reads a multi-document YAML stream of rendered objects
// (what kustomize-controller or helm-controller applies) as the objects of
// producer. Empty documents and lists' wrappers are skipped; a document
// that is not an object is an error naming its position. The sops
// metadata of a file SOPS encrypts is left out, as kustomize-controller
// leaves it out when it decrypts the file.
func ParseObjects(producer string, data []byte) ([]Object, error) {
	var out []Object
	n := 0
	for node, err := range yamlutil.Documents(bytes.NewReader(data)) {
		n++
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", producer, n, err)
		}
		if len(node.Content) == 0 || node.Content[0].Kind == yaml.ScalarNode && node.Content[0].Tag == "!!null" {
			continue
		}
		v, err := decodeDoc(node)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", producer, n, err)
		}
		if len(v) == 0 {
			continue
		}
		o, err := newObject(producer, v)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", producer, n, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// decodeDoc decodes a document into JSON-compatible values: directly,
// and through JSON (as the API server would read it) when the document
// holds what JSON has no form for (a timestamp, a key that is no string).
func decodeDoc(node *yaml.Node) (map[string]any, error) {
	var v map[string]any
	if err := node.Decode(&v); err == nil && jsonCompatible(v) {
		return v, nil
	}
	raw, err := yaml.Marshal(node)
	if err != nil {
		return nil, err
	}
	v = nil
	if err := sigyaml.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonCompatible(v any) bool {
	switch x := v.(type) {
	case nil, string, bool, int, int64, float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonCompatible(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonCompatible(e) {
				return false
			}
		}
		return true
	}
	return false
}

func newObject(producer string, v map[string]any) (Object, error) {
	apiVersion, _ := v["apiVersion"].(string)
	kind, _ := v["kind"].(string)
	md, _ := v["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if kind == "" || name == "" {
		return Object{}, errors.New("not a Kubernetes object: no kind or metadata.name")
	}
	dropSopsMetadata(v)
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return Object{Producer: producer, ID: ObjectID{Group: group, Kind: kind, Namespace: ns, Name: name}, Value: v}, nil
}

// sortObjects orders objects by ID, then producer.
func sortObjects(objs []Object) {
	slices.SortStableFunc(objs, func(a, b Object) int {
		return cmp.Or(compareIDs(a.ID, b.ID), cmp.Compare(a.Producer, b.Producer))
	})
}

// isSecret reports whether an object holds values a report must never
// print: a core Secret.
func (o Object) isSecret() bool { return o.ID.Group == "" && o.ID.Kind == "Secret" }
