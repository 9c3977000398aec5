// Package yamlutil is what fluxpack needs of go.yaml.in/yaml/v3 nodes beyond
// the library: field lookups (Field, Str), the line of a syntax error
// (ErrorLine, ErrorLineIn, WithoutLine), a decoder of the plain documents most manifests are, several
// times faster than the parser and node for node the same (DecodePlain),
// a node's JSON as the API machinery makes it, written directly (JSON),
// sigs.k8s.io/yaml's Marshal and JSONToYAML byte for byte without their
// YAML parse of JSON (Marshal, JSONToYAML, ObjectYAML), and the refusal of YAML that kustomize cannot read without
// crashing (Check): an alias inside the node its anchor names
// (a: &m {n: *m}). kyaml's RNode.DeAnchor, which kustomize runs on every
// file it reads, expands such an alias without end until the stack
// overflows, a fatal error no recover catches (kyaml v0.21.1; found by
// fluxpack's FuzzPlainMatchesKustomize). Flux's kustomize-controller runs
// the same code.
package yamlutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// AliasCycle returns an alias in n's tree that refers to a node containing
// it, or nil. It visits every node once, aliases' targets included.
func AliasCycle(n *yaml.Node) *yaml.Node {
	const (
		open = 1 + iota
		closed
	)
	state := map[*yaml.Node]int{}
	var visit func(n *yaml.Node) *yaml.Node
	visit = func(n *yaml.Node) *yaml.Node {
		switch state[n] {
		case open:
			return n
		case closed:
			return nil
		}
		state[n] = open
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if c := visit(n.Alias); c != nil {
				if c == n.Alias {
					return n // the alias that closes the cycle
				}
				return c
			}
		}
		for _, c := range n.Content {
			if found := visit(c); found != nil {
				return found
			}
		}
		state[n] = closed
		return nil
	}
	return visit(n)
}

// Check decodes every document of data and returns an error naming the
// line of the first alias AliasCycle finds, or nil. Data that is not valid
// YAML passes: the reader after it reports that. Without both an anchor
// and an alias in the text it does not decode at all.
func Check(data []byte) error {
	if bytes.IndexByte(data, '&') < 0 || bytes.IndexByte(data, '*') < 0 {
		return nil
	}
	for doc, err := range Documents(bytes.NewReader(data)) {
		if err != nil {
			return nil // not YAML: the reader after this reports that
		}
		if a := AliasCycle(doc); a != nil {
			return fmt.Errorf("line %d: %w", a.Line, Error(a))
		}
	}
	return nil
}

// Documents yields each YAML document of r, as a node, and then the
// decoder's error, if it stops on one before the end (the last pair).
func Documents(r io.Reader) iter.Seq2[*yaml.Node, error] {
	return func(yield func(*yaml.Node, error) bool) {
		dec := yaml.NewDecoder(r)
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&doc, nil) {
				return
			}
		}
	}
}

// Error is the error about the alias a, which AliasCycle returned.
func Error(a *yaml.Node) error {
	return fmt.Errorf("alias *%s is inside the node its anchor names: kustomize (and Flux) would expand it without end", a.Value)
}

// ErrorLine returns the line, counted from 1, that a go.yaml.in/yaml/v3
// error is about, or 0 when it names none. The library has no error type
// that carries the line, so its message is the only place to find it, and
// the message is not counted the same way for every error:
//
//   - a scanner error ("mapping values are not allowed in this context")
//     says "line N" counted from 1, as do unmarshal errors and duplicate
//     keys, which take the line of a node;
//   - a parser error ("did not find expected key") says "line N" counted
//     from 0: N+1 is the line where the collection it was parsing starts
//     ("while parsing a block mapping"), or, when that is the first line,
//     the line of the token it did not expect;
//   - either says no line at all when both are on the first line.
//
// So the line is N for the first kind, N+1 for a parser error, and 1 for
// a scanner or parser error without a line. A parser error's line can be
// before the line to fix, by as many lines as the collection holds before
// it: the library does not tell where the bad token is when it names the
// collection. A collection left open on the first line and never closed
// is reported where the file ends, the line after its last.
//
// go.yaml.in/yaml/v2, which sigs.k8s.io/yaml runs, counts the same way,
// but names the bad token's line first, so its lines are exact.
func ErrorLine(err error) int {
	msg := err.Error()
	i := strings.Index(msg, "yaml: ")
	if i < 0 {
		return 0
	}
	rest := msg[i+len("yaml: "):]
	if r, ok := strings.CutPrefix(rest, "unmarshal errors:\n  "); ok {
		rest = r
	}
	n, problem, ok := cutLine(rest)
	switch {
	case ok && parserProblems[problem]:
		return n + 1
	case ok:
		return n
	case parserProblems[rest] || isScannerProblem(rest):
		return 1
	}
	return 0
}

// ErrorLineIn is ErrorLine for an error decoding data, with the line of
// the bad token where the message names its block collection's: for such
// a parser error, data is parsed again with go.yaml.in/yaml/v2, the same
// parser (what sigs.k8s.io/yaml runs), which names the bad token's line
// first, and its line is taken when it stops on the same problem. A flow
// collection ([…], {…}) that is not closed keeps the line where it
// opens, the one to fix, which ErrorLine gives. A line past data's last
// (the end of the stream, where a collection left open is reported) is
// data's last.
func ErrorLineIn(data []byte, err error) int {
	line := ErrorLine(err)
	if problem := problemOf(err); parserProblems[problem] && !flowProblems[problem] {
		if l, ok := lineOfV2(data, problem); ok {
			line = l
		}
	}
	last := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		last++
	}
	if last > 0 && line > last {
		return last
	}
	return line
}

// problemOf is the problem a syntax error names, without its line.
func problemOf(err error) string {
	msg := err.Error()
	i := strings.Index(msg, "yaml: ")
	if i < 0 {
		return ""
	}
	rest := msg[i+len("yaml: "):]
	if _, problem, ok := cutLine(rest); ok {
		return problem
	}
	return rest
}

// lineOfV2 parses data with go.yaml.in/yaml/v2 and returns the line,
// counted from 1, where it stops on problem.
func lineOfV2(data []byte, problem string) (int, bool) {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		switch {
		case err == nil:
			continue
		case problemOf(err) != problem:
			return 0, false // the end of data, or another problem
		}
		return ErrorLine(err), true
	}
}

// WithoutLine returns err with the library's own "line N: " left out of its
// message (which then reads "yaml: " and the problem), for a caller that
// reports ErrorLine's line beside it: the two can differ (see ErrorLine),
// and the library's counts from the document the decoder was given, not
// from the file. It unwraps to err. An error naming no line, or several
// (unmarshal errors), comes back as it is.
func WithoutLine(err error) error {
	msg := err.Error()
	i := strings.Index(msg, "yaml: ")
	if i < 0 {
		return err
	}
	if _, problem, ok := cutLine(msg[i+len("yaml: "):]); ok && !strings.Contains(msg, "\n") {
		return &lineless{msg: msg[:i] + "yaml: " + problem, err: err}
	}
	return err
}

type lineless struct {
	msg string
	err error
}

func (e *lineless) Error() string { return e.msg }
func (e *lineless) Unwrap() error { return e.err }

// cutLine parses "line N: problem".
func cutLine(s string) (int, string, bool) {
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		return 0, "", false
	}
	num, problem, ok := strings.Cut(rest, ": ")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, problem, true
}

// parserProblems are the problems go.yaml.in/yaml/v3's parser reports
// (parserc.go, yaml_parser_set_parser_error and _context): their lines
// count from 0.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// flowProblems are the parser's problems inside a flow collection.
var flowProblems = map[string]bool{
	"did not find expected ',' or ']'": true,
	"did not find expected ',' or '}'": true,
}

// scannerProblems are the problems go.yaml.in/yaml/v3's scanner reports
// (scannerc.go, yaml_parser_set_scanner_error and _tag_error).
var scannerProblems = map[string]bool{
	"block sequence entries are not allowed in this context":       true,
	"could not find expected ':'":                                  true,
	"could not find expected directive name":                       true,
	"did not find URI escaped octet":                               true,
	"did not find expected '!'":                                    true,
	"did not find expected alphabetic or numeric character":        true,
	"did not find expected comment or line break":                  true,
	"did not find expected digit or '.' character":                 true,
	"did not find expected hexdecimal number":                      true,
	"did not find expected tag URI":                                true,
	"did not find expected version number":                         true,
	"did not find expected whitespace":                             true,
	"did not find expected whitespace or line break":               true,
	"did not find the expected '>'":                                true,
	"found a tab character that violates indentation":              true,
	"found a tab character where an indentation space is expected": true,
	"found an incorrect leading UTF-8 octet":                       true,
	"found an incorrect trailing UTF-8 octet":                      true,
	"found an indentation indicator equal to 0":                    true,
	"found character that cannot start any token":                  true,
	"found extremely long version number":                          true,
	"found invalid Unicode character escape code":                  true,
	"found unexpected document indicator":                          true,
	"found unexpected end of stream":                               true,
	"found unexpected non-alphabetical character":                  true,
	"found unknown directive name":                                 true,
	"found unknown escape character":                               true,
	"mapping keys are not allowed in this context":                 true,
	"mapping values are not allowed in this context":               true,
}

func isScannerProblem(s string) bool {
	return scannerProblems[s] || strings.HasPrefix(s, "exceeded max depth of ")
}

// Field returns the value node of key in mapping n (through aliases), or
// nil.
func Field(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Str returns the scalar at the path of keys from n, or "".
func Str(n *yaml.Node, keys ...string) string {
	for _, k := range keys {
		n = Field(n, k)
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}
