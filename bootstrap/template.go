package bootstrap

import (
	"regexp"
	"strings"
	"sync"
)

// TemplateMark stands, in what ExpandTemplate returns, for a template
// expression it could not evaluate: an object whose identity holds it is
// not known.
const TemplateMark = "__fluxpack_template__"

// templateSyntax is the Jinja ExpandTemplate reads, compiled on first use
// (every command pays for package inits).
var templateSyntax = sync.OnceValue(func() *jinja {
	return &jinja{
		forLoop:    regexp.MustCompile(`^\s*\{%-?\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+\[(.*)\]\s*-?%\}\s*$`),
		anyFor:     regexp.MustCompile(`^\s*\{%-?\s*for\s`),
		endFor:     regexp.MustCompile(`^\s*\{%-?\s*endfor\s*-?%\}\s*$`),
		statement:  regexp.MustCompile(`^\s*(\{%.*?%\}|\{#.*?#\}|\s)*$`),
		expression: regexp.MustCompile(`\{\{.*?\}\}`),
		quoted:     regexp.MustCompile(`^\s*(?:"([^"]*)"|'([^']*)')\s*$`),
	}
})

// jinja is the little of Jinja's syntax ExpandTemplate reads.
type jinja struct {
	// forLoop is a for loop over a list written out, alone on its line:
	// {% for ns in ["a", "b"] %}; anyFor and endFor open and close a loop
	// of any kind.
	forLoop, anyFor, endFor *regexp.Regexp
	// statement is a line of statements or comments only.
	statement *regexp.Regexp
	// expression is an expression within a line (Go templates' too).
	expression *regexp.Regexp
	// quoted is one item of a list of strings.
	quoted *regexp.Regexp
}

// ExpandTemplate is what a bootstrap template (a resources.yaml.j2 that
// minijinja-cli renders) says of its objects without running it: a for
// loop over a list written out repeats its lines once per item, the loop
// variable's {{ name }} replaced; any other statement line ({% if %},
// {% set %}, comments) is dropped, both branches of an if kept; any other
// expression is TemplateMark, its value not known, and a line of
// expressions only ({{- $x := readFile … }}, {{ end }}) is left empty. Go
// templates (a helmfile.yaml.gotmpl) are read so too.
func ExpandTemplate(text string) string {
	if !strings.Contains(text, "{") {
		return text
	}
	j := templateSyntax()
	out := j.expandLines(strings.Split(text, "\n"))
	// What no loop gave a value is not known.
	for i, l := range out {
		if !strings.Contains(l, "{{") {
			continue
		}
		marked := j.expression.ReplaceAllString(l, TemplateMark)
		if strings.TrimSpace(strings.ReplaceAll(marked, TemplateMark, "")) == "" {
			marked = ""
		}
		out[i] = marked
	}
	return strings.Join(out, "\n")
}

func (j *jinja) expandLines(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if j.anyFor.MatchString(l) {
			end := j.matchingEnd(lines, i)
			body := lines[i+1 : end]
			m := j.forLoop.FindStringSubmatch(l)
			items, ok := []string(nil), m != nil
			if ok {
				items, ok = j.listItems(m[2])
			}
			if !ok {
				out = append(out, j.expandLines(body)...) // once, its variable unknown
			} else {
				v := regexp.MustCompile(`\{\{-?\s*` + regexp.QuoteMeta(m[1]) + `\s*-?\}\}`)
				for _, item := range items {
					for _, b := range j.expandLines(body) {
						out = append(out, v.ReplaceAllLiteralString(b, item))
					}
				}
			}
			i = end
			continue
		}
		if strings.Contains(l, "{%") || strings.Contains(l, "{#") {
			if j.statement.MatchString(l) {
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

// matchingEnd is the index of the endfor closing the loop opened at
// lines[start], or len(lines) when there is none.
func (j *jinja) matchingEnd(lines []string, start int) int {
	depth := 0
	for k := start + 1; k < len(lines); k++ {
		switch {
		case j.anyFor.MatchString(lines[k]):
			depth++
		case j.endFor.MatchString(lines[k]):
			if depth == 0 {
				return k
			}
			depth--
		}
	}
	return len(lines)
}

// listItems reads a Jinja list of strings written out ("a", 'b').
func (j *jinja) listItems(s string) ([]string, bool) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		m := j.quoted.FindStringSubmatch(part)
		if m == nil {
			return nil, false
		}
		out = append(out, m[1]+m[2])
	}
	return out, len(out) > 0
}
