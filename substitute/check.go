package substitute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/envsubst/parse"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/suggest"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Severity grades a Finding.
type Severity string

// The severities, from worst.
const (
	// SeverityError: Flux would fail the Kustomization.
	SeverityError Severity = "error"
	// SeverityWarning: Flux applies something other than what was meant.
	SeverityWarning Severity = "warning"
	// SeverityHint: probably fine, but worth a look.
	SeverityHint Severity = "hint"
)

// Finding is one problem the static checks found.
type Finding struct {
	File     string   // path as given
	Line     int      // 1-based line of the reference
	Object   string   // Kind/namespace/name, or "" when not in an object
	Var      string   // the variable concerned
	Severity Severity // error, warning or hint
	Message  string
	// Unset says the finding is a use of Var, without a default, that
	// nothing available sets.
	Unset bool
}

// String formats f as "file:line: Object: severity: message".
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d", f.Line)
	}
	b.WriteString(": ")
	if f.Object != "" {
		b.WriteString(f.Object + ": ")
	}
	b.WriteString(string(f.Severity) + ": " + f.Message)
	return b.String()
}

// File is one YAML file to check.
type File struct {
	Path string
	Data []byte
}

// Available is what a Kustomization's postBuild provides to Check.
type Available struct {
	// Values are variables whose values are known (inline substitute, IaC
	// outputs, --vars-from files); the YAML 1.1 retyping check uses them.
	Values map[string]string
	// Names are variables that will exist but whose values are unknown
	// here (a Secret made later, say).
	Names []string
	// Always is substituteStrategy: Always. Without it, and with no
	// variable at all, Flux does not substitute.
	Always bool
}

func (a Available) has(name string) (string, bool, bool) {
	if v, ok := a.Values[name]; ok {
		return v, true, true
	}
	for _, n := range a.Names {
		if n == name {
			return "", false, true
		}
	}
	return "", false, false
}

// names are the variables a provides, sorted.
func (a Available) names() []string {
	names := slices.Concat(slices.Collect(maps.Keys(a.Values)), a.Names)
	slices.Sort(names)
	return slices.Compact(names)
}

func (a Available) substitutes() bool { return a.Always || len(a.Values) > 0 || len(a.Names) > 0 }

// Check scans the YAML files a Kustomization applies for ${var} references
// and reports, at file:line, what kustomize-controller (strict mode) would
// do with the variables in avail:
//
//   - error: a reference that nothing provides and that has no default;
//     a reference Flux cannot parse (${a.b}, ${my-var}, ${v-d}); a
//     variable name in avail that Flux rejects; a substituted value that
//     breaks the YAML (a: b, *x, @x);
//   - warning: a value YAML 1.1 retypes where it is substituted unquoted
//     (0123 → 83, yes → true, 1.10 → 1.1, "" → null), with the ${quote} fix;
//   - hint: $var without braces for a provided variable (Flux leaves it);
//     shell or dashboard ${VAR} that should be escaped as $${VAR}; references
//     left alone because there are no variables at all.
//
// Objects labelled or annotated kustomize.toolkit.fluxcd.io/substitute:
// disabled are skipped. Findings are sorted by file, line and variable.
func Check(files []File, avail Available) []Finding {
	us := make([]*uses, 0, len(files))
	for _, f := range files {
		us = append(us, readUses(f))
	}
	return checkUses(us, avail)
}

// uses are what Check reads in one YAML file: its scalars that hold a $,
// each with the object it belongs to.
type uses struct {
	path    string // names the file in findings
	line    int    // when set, the line of every finding (see Doc)
	scalars []use
	invalid bool // the file is not valid YAML from errLine on
	errLine int
}

type use struct {
	obj   string
	n     *yaml.Node
	isKey bool
}

// readUses decodes f and returns its uses; a file that is not valid YAML
// keeps the uses of the documents before the error, and checkUses reports
// the error.
func readUses(f File) *uses {
	ds, err := docs(f.Data)
	u := findUses(f.Path, ds...)
	if err != nil {
		u.invalid = true
		u.errLine = yamlutil.ErrorLineIn(f.Data, err)
	}
	return u
}

// Doc is one YAML document already decoded, as CheckDocs reads it.
type Doc struct {
	// Path names the file the document comes from in findings.
	Path string
	// Node is the document, as go.yaml.in/yaml/v3 decodes it (a document
	// node or its content).
	Node *yaml.Node
	// Line, when not 0, is the line of every finding in the document: for
	// an object kustomize built, whose node's lines are not the file's.
	Line int
	// Uses, when not nil, are the document's uses (FindUses of its node),
	// read instead of Node, which may then be nil.
	Uses *Uses
}

// Uses are what CheckDocs reads of one document: its scalars that hold a
// $, with the object each belongs to. A caller that keeps a document's
// Uses need not keep the document: those scalar nodes are all of it that
// CheckDocs reads.
type Uses struct{ scalars []use }

// FindUses returns the uses of a document (a document node or its
// content), as CheckDocs would find them in a Doc with that Node.
func FindUses(node *yaml.Node) *Uses {
	scalars := findUses("", node).scalars
	// Copies, so that keeping them keeps nothing else of the document
	// (its nodes may share one allocation: yamlutil.DecodePlain).
	copies := make([]yaml.Node, len(scalars))
	for i := range scalars {
		copies[i] = *scalars[i].n
		scalars[i].n = &copies[i]
	}
	return &Uses{scalars: scalars}
}

// Vars returns the names of the variables the uses reference, with a
// default or not, sorted, each once: what postBuild substitutes there. A
// scalar Flux cannot parse references none.
func (u *Uses) Vars() []string {
	if u == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, s := range u.scalars {
		if !strings.Contains(s.n.Value, "${") {
			continue
		}
		rs, err := referenced(s.n.Value)
		if err != nil {
			continue
		}
		for _, r := range rs {
			seen[r.name] = true
		}
	}
	return sortedKeys(seen)
}

// CheckDocs is Check for documents already decoded, so that a caller that
// decodes its manifests anyway (fluxpack lint) does not decode them twice:
// it reports what Check reports for them, sorted the same way.
func CheckDocs(docs []Doc, avail Available) []Finding {
	us := make([]*uses, 0, len(docs))
	for _, d := range docs {
		n := len(us)
		same := n > 0 && us[n-1].path == d.Path && us[n-1].line == d.Line // the next document of the same file
		switch {
		case d.Uses != nil && same:
			us[n-1].scalars = append(us[n-1].scalars, d.Uses.scalars...)
		case d.Uses != nil:
			us = append(us, &uses{path: d.Path, line: d.Line, scalars: append([]use(nil), d.Uses.scalars...)})
		case same:
			us[n-1].add(d.Node)
		default:
			u := findUses(d.Path, d.Node)
			u.line = d.Line
			us = append(us, u)
		}
	}
	return checkUses(us, avail)
}

// findUses returns the uses in docs, the documents of the file at path.
// Objects labelled or annotated kustomize.toolkit.fluxcd.io/substitute:
// disabled have none. The uses keep the scalar nodes they hold.
func findUses(path string, docs ...*yaml.Node) *uses {
	u := &uses{path: path}
	u.add(docs...)
	return u
}

// add adds the uses of more documents of the file.
func (u *uses) add(docs ...*yaml.Node) {
	for _, top := range docs {
		if top == nil {
			continue
		}
		if top.Kind == yaml.DocumentNode {
			if len(top.Content) == 0 {
				continue
			}
			top = top.Content[0]
		}
		obj, disabled := describeObject(top)
		if disabled {
			continue
		}
		walkScalars(top, func(n *yaml.Node, isKey bool) {
			if strings.Contains(n.Value, "$") {
				u.scalars = append(u.scalars, use{obj: obj, n: n, isKey: isKey})
			}
		})
	}
}

// checkUses reports what Check reports for the files of us, sorted.
func checkUses(us []*uses, avail Available) []Finding {
	var out []Finding
	for _, bad := range InvalidVarNames(mapOf(avail)) {
		out = append(out, Finding{Var: bad, Severity: SeverityError,
			Message: fmt.Sprintf("variable name %q is invalid (must match %s): Flux fails the whole Kustomization", bad, VarNamePattern)})
	}
	c := &checker{avail: avail, retyped: map[string]*Finding{}}
	for _, u := range us {
		if u == nil {
			continue
		}
		if u.invalid {
			out = append(out, Finding{File: u.path, Line: u.errLine, Severity: SeverityError, Message: "invalid YAML: kustomize cannot build it"})
		}
		for _, s := range u.scalars {
			fs := c.checkScalar(u.path, s.obj, s.n, s.isKey)
			if u.line > 0 {
				for i := range fs {
					fs[i].Line = u.line
				}
			}
			out = append(out, fs...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Var < b.Var
	})
	return out
}

func mapOf(a Available) map[string]string {
	m := make(map[string]string, len(a.Values)+len(a.Names))
	for k, v := range a.Values {
		m[k] = v
	}
	for _, n := range a.Names {
		m[n] = ""
	}
	return m
}

// docs decodes every YAML document of data.
func docs(data []byte) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for n, err := range yamlutil.Documents(bytes.NewReader(data)) {
		if err != nil {
			return out, err
		}
		out = append(out, n)
	}
	return out, nil
}

func describeObject(n *yaml.Node) (string, bool) {
	kind := yamlutil.Str(n, "kind")
	name := yamlutil.Str(n, "metadata", "name")
	ns := yamlutil.Str(n, "metadata", "namespace")
	disabled := yamlutil.Str(n, "metadata", "labels", DisabledKey) == "disabled" ||
		yamlutil.Str(n, "metadata", "annotations", DisabledKey) == "disabled"
	if kind == "" {
		return "", disabled
	}
	if ns != "" {
		return kind + "/" + ns + "/" + name, disabled
	}
	return kind + "/" + name, disabled
}

func walkScalars(n *yaml.Node, fn func(n *yaml.Node, isKey bool)) {
	switch n.Kind {
	case yaml.ScalarNode:
		fn(n, false)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Kind == yaml.ScalarNode {
				fn(n.Content[i], true)
			}
			walkScalars(n.Content[i+1], fn)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, fn)
		}
	}
}

var (
	bareVarRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$+[_[:alpha:]][_[:alpha:][:digit:]]*`) })
	shellVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[_A-Z][_A-Z0-9]*$`) })
)

// ref is one ${…} in a scalar.
type ref struct {
	name       string
	hasDefault bool
}

func refs(n parse.Node, out *[]ref) {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			refs(c, out)
		}
	case *parse.FuncNode:
		*out = append(*out, ref{name: n.Param, hasDefault: isDefaultOp(n.Name)})
		for _, a := range n.Args {
			refs(a, out)
		}
	}
}

// isDefaultOp is envsubst's list of operators that tolerate a missing
// variable in strict mode.
func isDefaultOp(op string) bool {
	switch op {
	case "-", "+", "=", "?", ":-", ":+", ":=", ":?":
		return true
	}
	return false
}

// lineOf returns the line of the first occurrence of needle in n's value.
func lineOf(n *yaml.Node, needle string) int {
	i := strings.Index(n.Value, needle)
	if i < 0 || (n.Style&(yaml.LiteralStyle|yaml.FoldedStyle)) == 0 {
		return n.Line
	}
	return n.Line + 1 + strings.Count(n.Value[:i], "\n")
}

// checker checks scalars against one Available. Manifests repeat the same
// values (${cluster_name} in every object), so it remembers what the
// retyping check, which encodes and decodes YAML, found for each value.
type checker struct {
	avail   Available
	retyped map[string]*Finding // value → the finding, nil for none
}

func (c *checker) checkScalar(path, obj string, n *yaml.Node, isKey bool) []Finding {
	avail := c.avail
	if !strings.Contains(n.Value, "$") {
		return nil
	}
	var out []Finding
	add := func(line int, v string, sev Severity, format string, args ...any) {
		out = append(out, Finding{File: path, Line: line, Object: obj, Var: v, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	multiLine := strings.Contains(n.Value, "\n")
	// $var without braces, for a variable that is provided.
	for _, m := range bareVarRE().FindAllString(n.Value, -1) {
		dollars := len(m) - len(strings.TrimLeft(m, "$"))
		name := m[dollars:]
		if dollars%2 == 1 {
			if _, _, ok := avail.has(name); ok {
				add(lineOf(n, m), name, SeverityHint, "$%s is never substituted; write ${%s} for the variable, or $$%s to make the intent plain", name, name, name)
			}
		}
	}
	rs, err := referenced(n.Value)
	if err != nil {
		i := strings.Index(n.Value, "${")
		add(lineOf(n, "${"), "", SeverityError, "Flux cannot parse %q: %v (variable names are letters, digits and _; escape a literal ${ as $${)", clip(n.Value[max(i, 0):]), err)
		return out
	}
	if len(rs) == 0 {
		return out
	}
	if !avail.substitutes() {
		add(lineOf(n, "${"), rs[0].name, SeverityHint, "no variables: Flux leaves ${%s} as written (add postBuild variables or substituteStrategy: Always)", rs[0].name)
		return out
	}
	allKnown := true
	for _, r := range rs {
		_, known, ok := avail.has(r.name)
		if !known {
			allKnown = false
		}
		if ok || r.hasDefault {
			continue
		}
		msg := fmt.Sprintf("variable %q is not set and has no default%s: Flux (strict mode) fails the Kustomization", r.name, suggest.DidYouMean(r.name, avail.names()))
		if multiLine || shellVarRE().MatchString(r.name) {
			msg += fmt.Sprintf("; if ${%s} is meant for a shell or a dashboard, escape it as $${%s}", r.name, r.name)
		}
		add(lineOf(n, "${"+r.name), r.name, SeverityError, "%s", msg)
		out[len(out)-1].Unset = true
	}
	if isKey || multiLine || !allKnown {
		return out
	}
	f, seen := c.retyped[n.Value]
	if !seen {
		f = checkRetyping(n.Value, rs[0].name, avail)
		c.retyped[n.Value] = f
	}
	if f != nil {
		g := *f
		g.File, g.Line, g.Object = path, n.Line, obj
		out = append(out, g)
	}
	return out
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func short(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case float64:
		return "the number " + strconv.FormatFloat(v, 'g', -1, 64)
	default:
		b, _ := json.Marshal(v)
		return fmt.Sprintf("%T %s", v, b)
	}
}

// yaml11Bools are the plain scalars YAML 1.1 (sigs.k8s.io/yaml) reads as
// booleans.
var yaml11Bools = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF") {
		m[s] = true
	}
	return m
})

// CheckKustomization checks the inline spec.postBuild.substitute of every
// Flux Kustomization in f: keys that YAML 1.1 reads as booleans (y, n,
// yes, no, on, off, true, false unquoted: Flux sees "true"/"false", so
// ${yes} is not set), names Flux rejects, and values that are not strings.
func CheckKustomization(f File) []Finding {
	ds, err := docs(f.Data)
	var out []Finding
	if err != nil {
		out = append(out, Finding{File: f.Path, Severity: SeverityError, Message: "invalid YAML"})
	}
	for _, d := range ds {
		if len(d.Content) == 0 {
			continue
		}
		top := d.Content[0]
		if yamlutil.Str(top, "kind") != "Kustomization" || !strings.HasPrefix(yamlutil.Str(top, "apiVersion"), "kustomize.toolkit.fluxcd.io/") {
			continue
		}
		obj, _ := describeObject(top)
		sub := yamlutil.Field(yamlutil.Field(yamlutil.Field(top, "spec"), "postBuild"), "substitute")
		if sub == nil || sub.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(sub.Content); i += 2 {
			k, v := sub.Content[i], sub.Content[i+1]
			add := func(sev Severity, format string, args ...any) {
				out = append(out, Finding{File: f.Path, Line: k.Line, Object: obj, Var: k.Value, Severity: sev, Message: fmt.Sprintf(format, args...)})
			}
			switch {
			case k.Style == 0 && yaml11Bools()[k.Value]:
				b := "true"
				if strings.ContainsAny(k.Value[:1], "nNfF") || strings.EqualFold(k.Value, "off") {
					b = "false"
				}
				add(SeverityError, "key %s is read by YAML 1.1 as the boolean %s, so Flux sets ${%s} and ${%s} is not set; quote the key ('%s') or pick another name", k.Value, b, b, k.Value, k.Value)
			case !ValidVarName(k.Value):
				add(SeverityError, "variable name %q is invalid (must match %s): Flux fails the whole Kustomization", k.Value, VarNamePattern)
			}
			if v.Kind != yaml.ScalarNode || (v.Style == 0 && v.ShortTag() != "!!str") {
				add(SeverityError, "the value of %s is not a string; substitute takes strings only: quote it", k.Value)
			}
		}
	}
	return out
}

// CheckSources reports the data keys of ConfigMaps and Secrets in f that
// are not valid variable names; loaded by substituteFrom, any of them makes
// Flux fail the whole Kustomization.
func CheckSources(f File) []Finding {
	ds, _ := docs(f.Data)
	var out []Finding
	for _, d := range ds {
		if len(d.Content) == 0 {
			continue
		}
		top := d.Content[0]
		kind := yamlutil.Str(top, "kind")
		if kind != "ConfigMap" && kind != "Secret" {
			continue
		}
		obj, _ := describeObject(top)
		for _, field := range []string{"data", "stringData"} {
			m := yamlutil.Field(top, field)
			if m == nil || m.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(m.Content); i += 2 {
				if k := m.Content[i]; !ValidVarName(k.Value) {
					out = append(out, Finding{File: f.Path, Line: k.Line, Object: obj, Var: k.Value, Severity: SeverityError,
						Message: fmt.Sprintf("key %q is not a valid variable name (must match %s): loaded by substituteFrom, Flux fails the whole Kustomization; rename it to %q", k.Value, VarNamePattern, VarName(k.Value))})
				}
			}
		}
	}
	return out
}
