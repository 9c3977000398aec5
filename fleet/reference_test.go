package fleet

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/strictyaml"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// docs/stack.md is written by fileReference from the schema types (the
// types decodeFile decodes stack and fleet files into) and the table of
// reference_table_test.go; TestFileReferenceIsCurrent compares it with the
// file, and `make docs` rewrites it.

// refRoots are the files docs/stack.md documents, in its order.
var refRoots = []struct {
	name string
	t    reflect.Type
}{
	{"Stack", reflect.TypeFor[stackfile.Doc]()},
	{"Fleet", reflect.TypeFor[fleetDoc]()},
}

// refStep is one field on the way from a file's root to a struct.
type refStep struct {
	field string
	coll  reflect.Kind // reflect.Struct: the field holds the struct; Slice, Map: its elements are
}

// refOcc is one place of a struct type in a file.
type refOcc struct {
	root    string
	t       reflect.Type
	path    []refStep
	parents []reflect.Type // parents[i] is the struct holding path[i]
}

// pathString writes the occurrence as spec.layers[].helmRelease, with a map's
// keys as <what they are>.
func (o refOcc) pathString(table map[reflect.Type]refType) string {
	var b strings.Builder
	for i, s := range o.path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.field)
		switch s.coll {
		case reflect.Slice:
			b.WriteString("[]")
		case reflect.Map:
			key := table[o.parents[i]].fields[s.field].key
			if key == "" {
				key = "key"
			}
			b.WriteString(".<" + key + ">")
		}
	}
	return b.String()
}

type refSchemaField struct {
	name string
	typ  reflect.Type
}

// schemaFields lists t's fields as the decoder knows them (jsonFields),
// inlined ones flattened, in declaration order.
func schemaFields(t reflect.Type) []refSchemaField {
	var out []refSchemaField
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (opts == "inline" || f.Anonymous) {
			out = append(out, schemaFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, refSchemaField{name, f.Type})
	}
	return out
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// refElem is the struct type a field of type t holds, itself or as the
// elements of a list or map, and which of the three; nil when none.
func refElem(t reflect.Type) (reflect.Type, reflect.Kind) {
	t = derefType(t)
	coll := reflect.Struct
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		coll = t.Kind()
		t = derefType(t.Elem())
	}
	if t.Kind() == reflect.Struct && t != strictyaml.DurationType {
		return t, coll
	}
	return nil, 0
}

// refWalk lists every place of a struct type in the file whose root is
// root, breadth first; it does not look inside the types stop says.
func refWalk(name string, root reflect.Type, stop func(reflect.Type) bool) []refOcc {
	var out []refOcc
	queue := []refOcc{{root: name, t: root}}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		out = append(out, o)
		if (len(o.path) > 0 && stop != nil && stop(o.t)) || slices.Contains(o.parents, o.t) {
			continue
		}
		for _, f := range schemaFields(o.t) {
			et, coll := refElem(f.typ)
			if et == nil {
				continue
			}
			queue = append(queue, refOcc{
				root:    name,
				t:       et,
				path:    append(slices.Clone(o.path), refStep{f.name, coll}),
				parents: append(slices.Clone(o.parents), o.t),
			})
		}
	}
	return out
}

// fileReference is docs/stack.md.
func fileReference() ([]byte, error) { return renderReference(refTypes) }

// renderReference writes the reference from the schema types and table,
// or returns every field and type of either that the other lacks.
func renderReference(table map[reflect.Type]refType) ([]byte, error) {
	var (
		order []reflect.Type // one section per type, in this order
		owner = map[reflect.Type]string{}
		where = map[reflect.Type]map[string][]string{} // type → root → paths
		errs  []string
	)
	for _, r := range refRoots {
		// A type documented for an earlier file is linked to, not walked
		// again: its places in this file are the link's.
		occs := refWalk(r.name, r.t, func(t reflect.Type) bool {
			o, ok := owner[t]
			return ok && o != r.name
		})
		for _, o := range occs {
			if _, ok := owner[o.t]; !ok {
				owner[o.t] = r.name
				order = append(order, o.t)
				errs = append(errs, checkRefType(table, o)...)
			}
			if len(o.path) > 0 {
				if where[o.t] == nil {
					where[o.t] = map[string][]string{}
				}
				where[o.t][o.root] = append(where[o.t][o.root], o.pathString(table))
			}
		}
	}
	titles := map[string]reflect.Type{}
	for t, rt := range table {
		if _, ok := owner[t]; !ok {
			errs = append(errs, fmt.Sprintf("the table documents %s (%q), which no stack or fleet file holds: remove it", t, rt.title))
		}
		if prev, dup := titles[strings.ToLower(rt.title)]; dup {
			errs = append(errs, fmt.Sprintf("%s and %s have one title %q: a section needs its own anchor", prev, t, rt.title))
		}
		titles[strings.ToLower(rt.title)] = t
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("docs/stack.md and the schema types differ; fix the table in fleet/reference_table_test.go, then run `make docs`:\n%s", strings.Join(errs, "\n"))
	}

	var b strings.Builder
	b.WriteString(refIntro)
	fmt.Fprintf(&b, "\n## A Stack file\n\n%s\n\n```yaml\n%s```\n", refStackExampleIntro, refStackExample)
	fmt.Fprintf(&b, "\n## A Fleet file\n\n%s\n\n```yaml\n%s```\n", refFleetExampleIntro, refFleetExample)
	for _, r := range refRoots {
		fmt.Fprintf(&b, "\n## %s file reference\n\n", r.name)
		var toc []string
		for _, t := range order {
			if owner[t] == r.name {
				toc = append(toc, refLink(table, t))
			}
		}
		b.WriteString(strings.Join(toc, " · ") + "\n")
		for _, t := range order {
			if owner[t] == r.name {
				writeRefSection(&b, table, t, where[t])
			}
		}
	}
	return []byte(b.String()), nil
}

// checkRefType returns what the table lacks or has too many for the type
// of o, at its first place in the files.
func checkRefType(table map[reflect.Type]refType, o refOcc) []string {
	at := o.root + " " + o.pathString(table)
	if len(o.path) == 0 {
		at = "the " + o.root + " file"
	}
	rt, ok := table[o.t]
	if !ok {
		return []string{fmt.Sprintf("%s (%s) is undocumented: add it to the table", at, o.t)}
	}
	var errs []string
	if rt.title == "" || strings.ContainsAny(rt.title, " `[]()") {
		errs = append(errs, fmt.Sprintf("%s: title %q: want one word", at, rt.title))
	}
	fields := schemaFields(o.t)
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.name)
	}
	// schemaFields must see what the decoder accepts.
	if want := sortedKeys(strictyaml.Fields(o.t)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		errs = append(errs, fmt.Sprintf("%s: fields %v, but the decoder accepts %v", at, names, want))
	}
	if rt.minimal != "" {
		if _, err := refMapping(rt.minimal); err != nil {
			errs = append(errs, fmt.Sprintf("%s: minimal: %v", at, err))
		}
	}
	for _, f := range fields {
		fat := at + "." + f.name
		if len(o.path) == 0 {
			fat = o.root + " " + f.name
		}
		fd, ok := rt.fields[f.name]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s is undocumented: add %q to the fields of %s", fat, f.name, rt.title))
			continue
		}
		if fd.desc == "" || fd.ex == "" {
			errs = append(errs, fmt.Sprintf("%s: want a description and an example", fat))
		}
		if strings.Contains(fd.desc+fd.ex+fd.defNote, "\n") {
			errs = append(errs, fmt.Sprintf("%s: a table cell takes one line", fat))
		}
		if fd.req && (fd.flux || fd.def != "" || fd.defNote != "") {
			errs = append(errs, fmt.Sprintf("%s: a required field has no default", fat))
		}
		if isMap := derefType(f.typ).Kind() == reflect.Map; isMap != (fd.key != "") && !(isMap && derefType(f.typ).Elem().Kind() == reflect.Interface) {
			errs = append(errs, fmt.Sprintf("%s: say what a map's keys are (key), and only for a map", fat))
		}
		for what, s := range map[string]string{"ex": fd.ex, "def": fd.def} {
			if _, err := refValue(s); s != "" && err != nil {
				errs = append(errs, fmt.Sprintf("%s: %s: %v", fat, what, err))
			}
		}
		if fd.with != "" {
			if _, err := refMapping(fd.with); err != nil {
				errs = append(errs, fmt.Sprintf("%s: with: %v", fat, err))
			}
		}
	}
	for _, name := range sortedKeys(rt.fields) {
		if !slices.Contains(names, name) {
			errs = append(errs, fmt.Sprintf("%s: the table documents field %q, which %s does not have: remove it", at, name, o.t))
		}
	}
	return errs
}

func refAnchor(title string) string { return strings.ToLower(title) }

func refLink(table map[reflect.Type]refType, t reflect.Type) string {
	title := table[t].title
	return "[" + title + "](#" + refAnchor(title) + ")"
}

// refTypeString is the Type column: what YAML a field takes.
func refTypeString(table map[reflect.Type]refType, t reflect.Type, key string) string {
	t = derefType(t)
	switch t {
	case strictyaml.DurationType:
		return "duration"
	case stackType("stackDep"):
		return "(layer name or " + refLink(table, t) + ")"
	}
	switch t.Kind() {
	case reflect.Slice:
		return "list of " + refTypeString(table, t.Elem(), "")
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "mapping (any YAML)"
		}
		if key == "" {
			key = "string"
		}
		return "map of " + key + " to " + refTypeString(table, t.Elem(), "")
	case reflect.Struct:
		return refLink(table, t)
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	}
	return t.String()
}

func writeRefSection(b *strings.Builder, table map[reflect.Type]refType, t reflect.Type, where map[string][]string) {
	rt := table[t]
	fmt.Fprintf(b, "\n### %s\n\n", rt.title)
	var places []string
	for _, r := range refRoots {
		if paths := where[r.name]; len(paths) > 0 {
			places = append(places, "`"+strings.Join(paths, "`, `")+"` in a "+r.name+" file")
		}
	}
	if len(places) > 0 {
		fmt.Fprintf(b, "At %s.", strings.Join(places, "; "))
		if rt.intro != "" {
			b.WriteString(" ")
		}
	}
	b.WriteString(rt.intro + "\n\n")
	b.WriteString("| Field | Type | Default | Description |\n| --- | --- | --- | --- |\n")
	for _, f := range schemaFields(t) {
		fd := rt.fields[f.name]
		def := "—"
		switch {
		case fd.req:
			def = "**required**"
		case fd.flux:
			def = "*required by Flux*"
		case fd.def != "" && fd.defNote != "":
			def = "`" + fd.def + "` " + fd.defNote
		case fd.def != "":
			def = "`" + fd.def + "`"
		case fd.defNote != "":
			def = fd.defNote
		}
		desc := fd.desc + "<br>Example: `" + f.name + ": " + fd.ex + "`"
		cells := []string{"`" + f.name + "`", refTypeString(table, f.typ, fd.key), def, desc}
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// refValue decodes one YAML value of the table.
func refValue(s string) (any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	return v, nil
}

func refMapping(s string) (map[string]any, error) {
	v, err := refValue(s)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%q: want a mapping", s)
	}
	return m, nil
}

// refMinimal is the smallest valid value of t, afresh: the table's minimal,
// or t's required fields with their examples.
func refMinimal(t reflect.Type) (map[string]any, error) {
	rt := refTypes[t]
	if rt.minimal != "" {
		return refMapping(rt.minimal)
	}
	m := map[string]any{}
	for name, fd := range rt.fields {
		if !fd.req {
			continue
		}
		v, err := refValue(fd.ex)
		if err != nil {
			return nil, err
		}
		m[name] = v
	}
	return m, nil
}

// refSet sets field name of the minimal value m to v, with what the
// table's with and without say the field needs.
func refSet(m map[string]any, fd refField, name string, v any) error {
	for _, w := range fd.without {
		delete(m, w)
	}
	if fd.with != "" {
		with, err := refMapping(fd.with)
		if err != nil {
			return err
		}
		maps.Copy(m, with)
	}
	m[name] = v
	return nil
}

// refDocument is a whole file holding leaf at o's place, every struct on
// the way minimal: a list gets leaf after its minimal elements, a map gets
// it under the first key of the field's example.
func refDocument(o refOcc, leaf map[string]any) (map[string]any, error) {
	var v any = leaf
	for i := len(o.path) - 1; i >= 0; i-- {
		step, parent := o.path[i], o.parents[i]
		m, err := refMinimal(parent)
		if err != nil {
			return nil, err
		}
		fd := refTypes[parent].fields[step.field]
		child := v
		switch step.coll {
		case reflect.Slice:
			list, _ := m[step.field].([]any)
			child = append(slices.Clone(list), v)
		case reflect.Map:
			ex, err := refMapping(fd.ex)
			if err != nil || len(ex) == 0 {
				return nil, fmt.Errorf("%s.%s: want an example mapping to take a key from", refTypes[parent].title, step.field)
			}
			child = map[string]any{sortedKeys(ex)[0]: v}
		}
		if err := refSet(m, fd, step.field, child); err != nil {
			return nil, err
		}
		v = m
	}
	return v.(map[string]any), nil
}

// refLoad loads a file as its root says, with the real loader, and
// builds it: a Stack's Plan, or the Plan and artifact of each cluster of a
// Fleet whose stack is dir/stack.yaml. It returns what they render.
func refLoad(dir, root string, doc map[string]any) (string, error) {
	data, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	write := func(b *layering.Builder) error {
		p, err := b.Build()
		if err != nil {
			return err
		}
		files, err := p.Files()
		if err != nil {
			return err
		}
		for _, f := range files {
			out.WriteString("--- " + f.Path + "\n")
			out.Write(f.Data)
		}
		return nil
	}
	switch root {
	case "Stack":
		b, err := stackfile.Parse(filepath.Join(dir, "doc.yaml"), data)
		if err != nil {
			return "", err
		}
		if err := write(b); err != nil {
			return "", err
		}
		return out.String(), nil
	case "Fleet":
		f, err := Parse(filepath.Join(dir, "fleet.yaml"), data)
		if err != nil {
			return "", err
		}
		if err := f.Check(); err != nil {
			return "", err
		}
		for _, c := range f.Clusters() {
			art, err := f.Artifact(c)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&out, "=== %s %s\n", c, art)
			b, err := f.Stack(c)
			if err != nil {
				return "", err
			}
			if err := write(b); err != nil {
				return "", err
			}
		}
		return out.String(), nil
	}
	return "", fmt.Errorf("unknown root %q", root)
}

// The reference fails for every field of the schema types it does not
// document, and for every field it documents that they lack.
func TestFileReferenceTable(t *testing.T) {
	_, err := renderReference(refTypes)
	require.NoError(t, err)

	layer := reflect.TypeFor[stackfile.Layer]()
	edit := func(f func(rt *refType)) map[reflect.Type]refType {
		table := maps.Clone(refTypes)
		rt := table[layer]
		rt.fields = maps.Clone(rt.fields)
		f(&rt)
		table[layer] = rt
		return table
	}
	tests := []struct {
		name  string
		table map[reflect.Type]refType
		want  string
	}{
		{"undocumented field", edit(func(rt *refType) { delete(rt.fields, "wait") }),
			"Stack spec.layers[].wait is undocumented"},
		{"field the types lack", edit(func(rt *refType) { rt.fields["waitFor"] = refField{desc: "d", ex: "x"} }),
			`the table documents field "waitFor", which stackfile.Layer does not have`},
		{"example that is not YAML", edit(func(rt *refType) { f := rt.fields["wait"]; f.ex = "[false"; rt.fields["wait"] = f }),
			"Stack spec.layers[].wait: ex:"},
		{"undocumented type", func() map[reflect.Type]refType {
			table := maps.Clone(refTypes)
			delete(table, stackType("stackGuard"))
			return table
		}(), "Stack spec.layers[].webhookGuard (stackfile.stackGuard) is undocumented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderReference(tt.table)
			require.Error(t, err, "renderReference with a table with an %s", tt.name)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Every example of the reference loads and builds in a file that is
// otherwise minimal; a file without a field it calls required does not
// load; writing out a default it gives renders the same files as leaving
// the field out. Each struct type is checked at every place it has, in a
// Stack and in a Fleet (whose stack is the reference's Stack example).
func TestFileReferenceFields(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(refStackExample), 0o644))
	for _, r := range refRoots {
		for _, o := range refWalk(r.name, r.t, nil) {
			rt, ok := refTypes[o.t]
			if !ok {
				continue // TestFileReferenceTable fails
			}
			name := o.root + "/" + o.pathString(refTypes)
			if len(o.path) == 0 {
				name = o.root + "/file"
			}
			t.Run(name, func(t *testing.T) {
				load := func(leaf map[string]any) (string, error) {
					doc, err := refDocument(o, leaf)
					if err != nil {
						return "", err
					}
					return refLoad(dir, o.root, doc)
				}
				minimal := func() map[string]any {
					m, err := refMinimal(o.t)
					require.NoError(t, err)
					return m
				}
				base, err := load(minimal())
				require.NoError(t, err, "the minimal %s %v does not load", rt.title, minimal())
				for _, f := range schemaFields(o.t) {
					fd := rt.fields[f.name]
					ex, err := refValue(fd.ex)
					require.NoError(t, err)
					m := minimal()
					require.NoError(t, refSet(m, fd, f.name, ex))
					_, err = load(m)
					assert.NoError(t, err, "the example %s: %s does not load", f.name, fd.ex)
					if fd.req {
						m := minimal()
						require.Contains(t, m, f.name, "the minimal %s lacks the required %s", rt.title, f.name)
						delete(m, f.name)
						_, err := load(m)
						assert.Error(t, err, "%s is documented as required, but a file without it loads", f.name)
					}
					if fd.def != "" {
						def, err := refValue(fd.def)
						require.NoError(t, err)
						m := minimal()
						m[f.name] = def
						got, err := load(m)
						if assert.NoError(t, err, "the default %s: %s does not load", f.name, fd.def) {
							assert.Equal(t, base, got, "%s: %s, documented as the default, renders other files than leaving it out", f.name, fd.def)
						}
					}
				}
			})
		}
	}
}

// refLoad tells a file that loads from one that does not, and
// TestFileReferenceFields would catch a wrong claim of the table.
func TestFileReferenceFieldsCatch(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(refStackExample), 0o644))
	var layers refOcc
	for _, o := range refWalk("Stack", reflect.TypeFor[stackfile.Doc](), nil) {
		if o.t == reflect.TypeFor[stackfile.Layer]() {
			layers = o
			break
		}
	}
	tests := []struct {
		name string
		leaf string
		ok   bool
	}{
		{"minimal layer", "{name: backup}", true},
		{"a layer without its name (name not required would be wrong)", "{path: ./x}", false},
		{"an example of the wrong type", "{name: backup, wait: 'no'}", false},
		{"an example the builder refuses", "{name: backup, deletionPolicy: Keep}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaf, err := refMapping(tt.leaf)
			require.NoError(t, err)
			doc, err := refDocument(layers, leaf)
			require.NoError(t, err)
			_, err = refLoad(dir, "Stack", doc)
			if tt.ok {
				assert.NoError(t, err, "a stack with the layer %s", tt.leaf)
			} else {
				assert.Error(t, err, "a stack with the layer %s", tt.leaf)
			}
		})
	}
	// Writing prune: false is not the default.
	leaf, _ := refMapping("{name: backup}")
	doc, err := refDocument(layers, leaf)
	require.NoError(t, err)
	base, err := refLoad(dir, "Stack", doc)
	require.NoError(t, err)
	leaf["prune"] = false
	doc, err = refDocument(layers, leaf)
	require.NoError(t, err)
	got, err := refLoad(dir, "Stack", doc)
	require.NoError(t, err)
	assert.NotEqual(t, base, got, "prune: false renders as leaving prune out")
}

// stackType is the stack file schema's type called name (package
// stackfile keeps them unexported), found from stackfile.Doc.
func stackType(name string) reflect.Type {
	seen := map[reflect.Type]bool{}
	var find func(t reflect.Type) reflect.Type
	find = func(t reflect.Type) reflect.Type {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return nil
		}
		seen[t] = true
		if t.Name() == name && t.PkgPath() == reflect.TypeFor[stackfile.Doc]().PkgPath() {
			return t
		}
		for f := range t.Fields() {
			if found := find(f.Type); found != nil {
				return found
			}
		}
		return nil
	}
	t := find(reflect.TypeFor[stackfile.Doc]())
	if t == nil {
		panic("stackfile has no schema type " + name)
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
