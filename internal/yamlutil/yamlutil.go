// Package yamlutil is what fluxpack needs of go.yaml.in/yaml/v3 nodes beyond
// the library: field lookups (Field, Str), the line of a syntax error
// (ErrorLine), a decoder of the plain documents most manifests are, several
// times faster than the parser and node for node the same (DecodePlain),
// and the refusal of YAML that kustomize cannot read without
// crashing (Check): an alias inside the node its anchor names
// (a: &m {n: *m}). kyaml's RNode.DeAnchor, which kustomize runs on every
// file it reads, expands such an alias without end until the stack
// overflows, a fatal error no recover catches (kyaml v0.21.1; found by
// fluxpack's FuzzPlainMatchesKustomize). Flux's kustomize-controller runs
// the same code.
package yamlutil

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return nil // the end, or not YAML: the reader after this reports that
		}
		if a := AliasCycle(&doc); a != nil {
			return fmt.Errorf("line %d: %w", a.Line, Error(a))
		}
	}
}

// Error is the error about the alias a, which AliasCycle returned.
func Error(a *yaml.Node) error {
	return fmt.Errorf("alias *%s is inside the node its anchor names: kustomize (and Flux) would expand it without end", a.Value)
}

// ErrorLine returns the line a go.yaml.in/yaml/v3 syntax error names
// ("yaml: line 3: ..."), or 0. The library has no error type that carries
// the line, so its message is the only place to find it.
func ErrorLine(err error) int {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		if end := strings.IndexByte(rest, ':'); end > 0 {
			if n, err := strconv.Atoi(rest[:end]); err == nil {
				return n
			}
		}
	}
	return 0
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
