package strictyaml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Document reads the one YAML document of a file called name (what says
// which kind of file, for errors: "stack", "fleet"). A file that does not
// parse, is empty or holds a second document is an *errdefs.FileError.
func Document(name string, data []byte, what string) (*yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, &errdefs.FileError{Path: name, Line: yamlutil.ErrorLineIn(data, err), Err: yamlutil.WithoutLine(err)}
	}
	if len(root.Content) == 0 {
		return nil, &errdefs.FileError{Path: name, Err: fmt.Errorf("empty %s file", what)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &errdefs.FileError{Path: name, Line: extra.Line, Err: errors.New("want one YAML document, found another")}
	}
	return root.Content[0], nil
}

// File reads the one document of a fluxpack file called name (what says
// which: "stack", "fleet") and decodes it into out, a pointer, strictly,
// with hooks. A file that is not one YAML document, or is a Flux
// Kustomization given where a fluxpack file was wanted, is an error; the
// problems of its fields are recorded in the Decoder returned (Err), which
// the caller's own checks add to.
func File(name string, data []byte, what string, hooks map[reflect.Type]Hook, out any) (*Decoder, *yaml.Node, error) {
	doc, err := Document(name, data, what)
	if err != nil {
		return nil, nil, err
	}
	if av, kind := yamlutil.Str(doc, "apiVersion"), yamlutil.Str(doc, "kind"); strings.HasPrefix(av, "kustomize.toolkit.fluxcd.io/") && kind == "Kustomization" {
		return nil, nil, &errdefs.FileError{Path: name, Line: doc.Line, Err: fmt.Errorf(
			"this is a Flux Kustomization (%s), not a fluxpack %s file: give the folder that applies it (for instance clusters/<name>) as the entry point, fluxpack lint DIR, or turn the repository into a stack with fluxpack import DIR", av, what)}
	}
	// "the stack" for a fleet file too: its top level was always named so.
	d := &Decoder{File: name, Root: "the stack", Hooks: hooks}
	d.Decode(doc, out)
	return d, doc, nil
}

// Shorthand is implemented by a schema type that a file may also write in
// a shorter form (a dependency given as a plain string): Shorthand returns
// the JSON-ready value n stands for and true, or false to decode n by the
// type's structure. The decoder calls it on the type's zero value.
type Shorthand interface {
	Shorthand(n *yaml.Node) (v any, ok bool)
}

var shorthandType = reflect.TypeFor[Shorthand]()

// A Hook decodes the values of one Go type that a file may write in a
// form of its own: a shorthand (a plain string for a struct), or a string
// checked as it is read (a duration). It returns the JSON-ready value and
// true, or false to let the decoder read n by the type's structure. It
// reports problems with fail, which records them at n's line.
type Hook func(n *yaml.Node, path string, fail func(format string, args ...any)) (v any, ok bool)

// Decoder decodes YAML nodes into Go values strictly, walking the nodes
// along the Go type (by its JSON field names) so that every problem gets
// its line: unknown and duplicate fields, wrong kinds of values. It keeps
// every problem; Err returns them. The zero Decoder is not usable: set
// File.
type Decoder struct {
	// File is the file name problems are reported at.
	File string
	// Root names the document in "unknown field" problems at its top
	// level ("the stack").
	Root string
	// Hooks decode the types they are keyed by.
	Hooks map[reflect.Type]Hook

	errs []error
}

// Decode decodes n into out, a pointer, by way of JSON (so out's
// UnmarshalJSON methods and JSON tags apply). Problems are recorded; out
// is left alone when there is one.
func (d *Decoder) Decode(n *yaml.Node, out any) {
	t := reflect.TypeOf(out).Elem()
	before := len(d.errs)
	v := d.value(n, t, "")
	if len(d.errs) > before {
		return
	}
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		d.Fail(n, "decoding: %v", err)
	}
}

// Fail records a problem at n's line.
func (d *Decoder) Fail(n *yaml.Node, format string, args ...any) {
	d.FailAt(n.Line, format, args...)
}

// FailAt records a problem at a line (0: the file).
func (d *Decoder) FailAt(line int, format string, args ...any) {
	d.errs = append(d.errs, &errdefs.FileError{Path: d.File, Line: line, Err: fmt.Errorf(format, args...)})
}

// Err returns every problem recorded, one per line, or nil.
func (d *Decoder) Err() error { return errors.Join(d.errs...) }

// Duration is a Hook for metav1.Duration: a positive Go duration such as
// 10m.
func Duration(n *yaml.Node, path string, fail func(format string, args ...any)) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		fail("%s: want a duration such as 10m", path)
		return nil, true
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil || dur <= 0 {
		fail("%s: invalid duration %q: want a positive duration such as 10m", path, n.Value)
		return nil, true
	}
	return n.Value, true
}

// DurationType is the type Duration decodes.
var DurationType = reflect.TypeFor[metav1.Duration]()

func (d *Decoder) value(n *yaml.Node, t reflect.Type, path string) any {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(shorthandType) {
		if v, ok := reflect.New(t).Interface().(Shorthand).Shorthand(n); ok {
			return v
		}
	}
	if h, ok := d.Hooks[t]; ok {
		if v, ok := h(n, path, func(format string, args ...any) { d.Fail(n, format, args...) }); ok {
			return v
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.Fail(n, "%s: want a mapping", path)
			return nil
		}
		fields := jsonFields(t)
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				d.Fail(k, "unknown field %q in %s (known: %s)", k.Value, d.orRoot(path), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
				continue
			}
			if _, dup := out[k.Value]; dup {
				d.Fail(k, "duplicate field %q in %s", k.Value, d.orRoot(path))
				continue
			}
			out[k.Value] = d.value(v, f, join(path, k.Value))
		}
		return out
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.Fail(n, "%s: want a list", path)
			return nil
		}
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			out = append(out, d.value(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)))
		}
		return out
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.Fail(n, "%s: want a mapping", path)
			return nil
		}
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			out[k.Value] = d.value(v, t.Elem(), join(path, k.Value))
		}
		return out
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.Fail(n, "%s: want a string", path)
			return nil
		}
		return n.Value
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || err != nil {
			d.Fail(n, "%s: want true or false, got %q", path, n.Value)
			return nil
		}
		return b
	case reflect.Int, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.Fail(n, "%s: want an integer, got %q", path, n.Value)
			return nil
		}
		return i
	case reflect.Interface:
		// Free-form values (a HelmRelease's values): any YAML JSON holds.
		var v any
		if err := n.Decode(&v); err != nil {
			d.Fail(n, "%s: %v", path, err)
			return nil
		}
		if _, err := json.Marshal(v); err != nil {
			d.Fail(n, "%s: not JSON: %v", path, err)
			return nil
		}
		return v
	}
	d.Fail(n, "%s: unsupported field type %s", path, t)
	return nil
}

// Fields maps the JSON names of struct type t's fields, inlined ones
// flattened, to their types: the fields a file may write.
func Fields(t reflect.Type) map[string]reflect.Type { return jsonFields(t) }

func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (opts == "inline" || f.Anonymous) {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (d *Decoder) orRoot(path string) string {
	if path == "" {
		return d.Root
	}
	return path
}

// LineOf finds the line of a field path like spec.layers[2].name, given
// as "spec", "layers", 2, "name", or of the nearest node on the way.
func LineOf(n *yaml.Node, path ...any) int {
	for _, p := range path {
		for n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch p := p.(type) {
		case string:
			next := yamlutil.Field(n, p)
			if next == nil {
				return n.Line
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || p >= len(n.Content) {
				return n.Line
			}
			n = n.Content[p]
		}
	}
	return n.Line
}
