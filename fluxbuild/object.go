package fluxbuild

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Object is one object kustomize-controller would apply, as the build
// leaves it (before postBuild), with where it comes from.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string

	// File is the file the object comes from, slash-separated and relative
	// to the Source's directory; Line is its line there (1-based). For an
	// object kustomize made (a generator's ConfigMap), File is the
	// kustomization file and Line 0.
	File string
	Line int

	// Node is the object as built. For a directory read without kustomize
	// it is the parsed file's node, with the file's own lines.
	Node *yaml.Node
	// Built is true for an object kustomize built: its Node's lines are
	// not the file's, and Line is where kustomize says it came from.
	Built bool
	// ScalarLines is true for an object kustomize built from a file
	// whose scalars that hold a $ (the ${var} uses postBuild
	// substitutes) are at their lines in File all the same: each where
	// the file has the same value, or at Line where the build wrote it
	// (a patch). An object a generator made has its values from other
	// files: its lines are not File's.
	ScalarLines bool
	// Dollar is false when the object certainly holds no $, and so no
	// ${var} for postBuild to substitute (its file has none); true when it
	// may.
	Dollar bool
	// IdentityOnly is true for an object read for its identity only
	// (WithIdentityOnly): Node holds its apiVersion, kind and metadata and
	// nothing else, and the rest of its document was not checked.
	IdentityOnly bool

	local bool // config.kubernetes.io/local-config: kustomize leaves it out
}

// Group is the API group of the object's apiVersion ("" for the core group).
func (o *Object) Group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// String names the object as Flux's events do: Kind/namespace/name, or
// Kind/name for an object without a namespace.
func (o *Object) String() string {
	if o.Namespace != "" {
		return o.Kind + "/" + o.Namespace + "/" + o.Name
	}
	return o.Kind + "/" + o.Name
}

// newObject reads what every object needs from n: an object that Flux
// will turn into JSON, which fails for some (checkObject). Local
// configuration, which kustomize drops, never gets that far; only its id
// counts.
func newObject(n *yaml.Node) (*Object, error) {
	o := &Object{
		APIVersion: yamlutil.Str(n, "apiVersion"),
		Kind:       yamlutil.Str(n, "kind"),
		Name:       yamlutil.Str(n, "metadata", "name"),
		Namespace:  yamlutil.Str(n, "metadata", "namespace"),
		Node:       n,
	}
	if o.local = localConfig(n); o.local {
		return o, nil
	}
	if o.APIVersion == "" || o.Kind == "" {
		return nil, fmt.Errorf("not a Kubernetes object: apiVersion and kind are required")
	}
	if o.Name == "" && yamlutil.Str(n, "metadata", "generateName") == "" {
		return nil, fmt.Errorf("%s: metadata.name is required", o.Kind)
	}
	if err := checkObject(n); err != nil {
		return nil, err
	}
	return o, nil
}

// localConfig reports whether the object n is local configuration, which
// kustomize leaves out of a build: its config.kubernetes.io/local-config
// annotation is there and not "false".
func localConfig(n *yaml.Node) bool {
	v := yamlutil.Field(yamlutil.Field(yamlutil.Field(n, "metadata"), "annotations"), konfig.IgnoredByKustomizeAnnotation)
	return v != nil && (v.Kind != yaml.ScalarNode || v.Value != "false")
}

// checkUnique refuses two objects with the same id, as kustomize does
// ("may not add resource with an already registered id"): same group,
// version, kind, name and namespace, no namespace being "default".
func checkUnique(objs []*Object) error {
	type id struct{ apiVersion, kind, namespace, name string }
	seen := make(map[id]*Object, len(objs))
	for _, o := range objs {
		k := id{o.APIVersion, o.Kind, o.Namespace, o.Name}
		if k.namespace == "default" {
			k.namespace = ""
		}
		if first, dup := seen[k]; dup {
			return &FileError{Path: o.File, Line: o.Line, Err: fmt.Errorf("%w: %s is already at %s:%d: kustomize refuses two objects with one id", ErrDuplicateID, o, first.File, first.Line)}
		}
		seen[k] = o
	}
	return nil
}
