package layering

import (
	"strings"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// ObjectRef names an object: Kind/namespace/name.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// ParseObjectRef reads an object as fluxpack prints it:
// KIND/NAMESPACE/NAME, KIND/NAME for an object without a namespace (or
// KIND//NAME, the same with the namespace left empty), the kind
// optionally with its API group (KIND.GROUP, as diff names objects),
// which the reference does not keep.
func ParseObjectRef(s string) (ObjectRef, error) {
	parts := strings.Split(s, "/")
	var r ObjectRef
	switch len(parts) {
	case 2:
		r = ObjectRef{Kind: parts[0], Name: parts[1]}
	case 3:
		r = ObjectRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}
	default:
		return r, errdefs.Kind(ErrInvalidOption, "object %q: want KIND/NAMESPACE/NAME, or KIND/NAME for an object without a namespace", s)
	}
	r.Kind, _, _ = strings.Cut(r.Kind, ".")
	if r.Kind == "" || r.Name == "" {
		return r, errdefs.Kind(ErrInvalidOption, "object %q: want KIND/NAMESPACE/NAME, or KIND/NAME for an object without a namespace", s)
	}
	return r, nil
}
