package yamlutil

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// JSON returns the JSON of the value mapping n decodes to: byte for byte
// what encoding/json writes of the map[string]any n.Decode fills (keys
// sorted), the route the API machinery takes from YAML to a Go type. It
// writes the common node trees (string keys, no aliases, plain or quoted
// strings, decimal integers, booleans, nulls) directly, several times
// faster, and takes the library's route for anything else, so that an
// error is the library's too.
func JSON(n *yaml.Node) ([]byte, error) {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n != nil && n.Kind == yaml.MappingNode {
		w := jsonWriter{b: make([]byte, 0, 512)}
		if err := w.value(n); err == nil {
			return w.b, nil
		} else if !errors.Is(err, errNotDirect) {
			return nil, err
		}
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// errNotDirect stops jsonWriter at a node it leaves to the library.
var errNotDirect = errors.New("not written directly")

type jsonWriter struct{ b []byte }

func (w *jsonWriter) value(n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		return w.mapping(n)
	case yaml.SequenceNode:
		w.b = append(w.b, '[')
		for i, c := range n.Content {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if err := w.value(c); err != nil {
				return err
			}
		}
		w.b = append(w.b, ']')
		return nil
	case yaml.ScalarNode:
		return w.scalar(n)
	}
	return errNotDirect // an alias, or a document inside a value
}

// mapping writes n's pairs in the order of their keys, as encoding/json
// writes a map. Duplicate keys (an error of the library's) and keys that
// are not strings are left to the library.
func (w *jsonWriter) mapping(n *yaml.Node) error {
	pairs := len(n.Content) / 2
	for i := 0; i < pairs; i++ {
		k := n.Content[2*i]
		if k.Kind != yaml.ScalarNode || k.Style&yaml.TaggedStyle != 0 || k.ShortTag() != "!!str" {
			return errNotDirect
		}
	}
	order := make([]int, pairs)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(n.Content[2*a].Value, n.Content[2*b].Value) })
	for i := 1; i < pairs; i++ {
		if n.Content[2*order[i]].Value == n.Content[2*order[i-1]].Value {
			return errNotDirect
		}
	}
	w.b = append(w.b, '{')
	for i, j := range order {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.str(n.Content[2*j].Value)
		w.b = append(w.b, ':')
		if err := w.value(n.Content[2*j+1]); err != nil {
			return err
		}
	}
	w.b = append(w.b, '}')
	return nil
}

func (w *jsonWriter) scalar(n *yaml.Node) error {
	if n.Style&yaml.TaggedStyle == 0 {
		switch tag := n.ShortTag(); {
		case tag == "!!str":
			w.str(n.Value)
			return nil
		case tag == "!!null":
			w.b = append(w.b, "null"...)
			return nil
		case tag == "!!bool" && (n.Value == "true" || n.Value == "false"),
			tag == "!!int" && decimal(n.Value):
			w.b = append(w.b, n.Value...)
			return nil
		}
	}
	// Other spellings and tags (floats, 0x10, True, timestamps, !!binary):
	// as the library decodes the scalar into an any.
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.b = append(w.b, b...)
	return nil
}

// decimal reports whether s is an integer written as encoding/json writes
// the int YAML resolves it to: no sign but a minus, no leading zero, and
// short enough to be an int64.
func decimal(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 18 || d[0] == '0' && (len(d) > 1 || len(d) < len(s)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// str writes s quoted: directly when it needs no escape in encoding/json's
// rules (which also escape <, > and &), through encoding/json otherwise.
func (w *jsonWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			w.b = append(w.b, b...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}
