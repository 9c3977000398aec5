package fluxbuild

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// This file reads an object for its identity only (WithIdentityOnly): its
// apiVersion, kind and metadata, decoded as go.yaml.in/yaml/v3 decodes
// them in the whole document (by hand where every line is of the
// plainest shape, fastHeader; by yaml.v3 otherwise), without decoding the
// rest.

// identityKeys are the top-level fields an identity-only node holds.
var identityKeys = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// readIdentities reads the objects of a manifest file as readManifests
// does, each for its identity where identityNode can: what kustomize's
// builds need to know of the files they read (which object is on which
// line), kustomize reading them whole itself.
func readIdentities(rel string, data []byte) ([]*yaml.Node, error) {
	nodes, _, err := readManifestsFor(rel, data, func(string, string) bool { return false })
	return nodes, err
}

// identityNode returns a document node holding only the apiVersion, kind
// and metadata of the object text holds (one document of a file a single
// decoder reads, starting after line lines of the file), with the lines
// and values the whole document's decode gives them; or nil, for the
// caller to decode the whole document, when needs says the object's kind
// needs more (or it is a List, whose items are objects), when text has a
// $ (a ${var} anywhere is for postBuild to find), or when text is not of
// the shape whose top-level entries can be told apart line by line:
// a block mapping whose keys are plain words that start their lines.
//
// The lines of the other entries are not decoded, so an error there
// (bad indentation, a repeated key, a value JSON cannot hold) goes
// unseen: the node answers what the object is, not whether Flux can
// apply it.
func identityNode(text []byte, line int, needs func(apiVersion, kind string) bool) *yaml.Node {
	if bytes.IndexByte(text, '$') >= 0 {
		return nil
	}
	// Each line of text is kept in mini when it belongs to one of the
	// identity entries, and left empty otherwise, so that lines and
	// columns stay the document's.
	var mini []byte
	keep, started := false, false
	first, n := 0, 0 // the line of the first entry, and of this one
	seen := map[string]bool{}
	for rest := text; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
		}
		l := rest[:end]
		rest = rest[min(end+1, len(rest)):]
		n++
		switch {
		case len(bytes.TrimLeft(l, " ")) == 0 || bytes.TrimLeft(l, " ")[0] == '#':
			// A blank or comment line: where it sits does not matter.
		case l[0] == ' ' || l[0] == '-' && (len(l) == 1 || l[1] == ' '):
			// More of the entry above (a block sequence may sit at the
			// key's own indentation).
			if !started {
				return nil
			}
		case !started && bytes.HasPrefix(l, []byte("---")) && len(bytes.TrimSpace(l[3:])) == 0:
			// The document's start marker.
			mini = append(mini, '\n')
			continue
		default:
			key, ok := entryKey(l)
			if !ok || seen[key] {
				return nil
			}
			if !started {
				first = n
			}
			seen[key], started = true, true
			keep = identityKeys[key]
		}
		if keep {
			mini = append(mini, l...)
		}
		mini = append(mini, '\n')
	}
	if !seen["apiVersion"] || !seen["kind"] || !seen["metadata"] {
		return nil
	}
	doc := fastHeader(mini)
	if doc == nil {
		doc = new(yaml.Node)
		if err := yaml.Unmarshal(mini, doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return nil
		}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode || top.Style&yaml.FlowStyle != 0 || top.Tag != "!!map" || len(top.Content) != 2*len(identityKeys) {
		return nil
	}
	kind := plainValue(yamlutil.Field(top, "kind"))
	if kind == "" || strings.HasSuffix(kind, "List") || needs(yamlutil.Str(top, "apiVersion"), kind) {
		return nil
	}
	// The mapping starts where its first entry does, kept or not.
	doc.Line, top.Line, top.Column = first, first, 1
	shiftLines(doc, line)
	return doc
}

// entryKey returns the key a top-level entry's line starts with: a plain
// word (letters, digits, _ . -, starting with a letter) followed by a
// colon and a space or the end of the line.
func entryKey(l []byte) (string, bool) {
	i := 0
	for ; i < len(l); i++ {
		c := l[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '_' || c == '.' || c == '-')) {
			break
		}
	}
	if i == 0 || i >= len(l) || l[i] != ':' || i+1 < len(l) && l[i+1] != ' ' {
		return "", false
	}
	return string(l[:i]), true
}

// headerLevel is a block mapping being read by fastHeader, at its indent.
type headerLevel struct {
	indent int
	m      *yaml.Node
}

// fastHeader decodes mini, the identity entries of a document, as
// go.yaml.in/yaml/v3 would, when every line of it is of the plainest
// shape: a key and either a plain word, a one-line flow mapping of plain
// words, or nothing, with a block mapping one indent deeper below; keys
// and words are made of letters, digits and . _ / - (a word starting with
// a letter or digit), so that nothing in them can be a comment, a quote,
// an indicator or a tag. Anything else returns nil, for the parser to
// read. Scalars get the tags the parser's resolution gives them (a word
// may be a number, a bool or null).
func fastHeader(mini []byte) *yaml.Node {
	top := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}
	stack := []headerLevel{{indent: 0, m: top}}
	var pending *yaml.Node // a key whose value is the block mapping below
	pendingIndent := 0
	line := 0
	for rest := mini; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			end = len(rest)
		}
		l := bytes.TrimRight(rest[:end], " ")
		rest = rest[min(end+1, len(rest)):]
		line++
		if len(l) == 0 {
			continue
		}
		indent := 0
		for indent < len(l) && l[indent] == ' ' {
			indent++
		}
		switch {
		case pending != nil:
			if indent <= pendingIndent {
				return nil // a key without a value
			}
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: indent + 1}
			parent := stack[len(stack)-1].m
			parent.Content = append(parent.Content, pending, m)
			stack = append(stack, headerLevel{indent: indent, m: m})
			pending = nil
		default:
			for len(stack) > 1 && indent < stack[len(stack)-1].indent {
				stack = stack[:len(stack)-1]
			}
			if indent != stack[len(stack)-1].indent {
				return nil
			}
		}
		m := stack[len(stack)-1].m
		n := indent + wordLen(l[indent:])
		if n == indent || n >= len(l) || l[n] != ':' {
			return nil
		}
		key := scalarNode(l[indent:n], line, indent+1)
		for i := 0; i < len(m.Content); i += 2 {
			if m.Content[i].Value == key.Value {
				return nil // a repeated key: left to the parser and to checkObject
			}
		}
		if m == top && len(m.Content) == 0 {
			top.Line, top.Column = line, indent+1
		}
		switch v := l[n+1:]; {
		case len(v) == 0:
			pending, pendingIndent = key, indent
		case v[0] != ' ':
			return nil
		default:
			at := n + 2
			for at < len(l) && l[at] == ' ' {
				at++
			}
			var value *yaml.Node
			if l[at] == '{' {
				value = flowMapping(l, at, line)
			} else if w := wordLen(l[at:]); at+w == len(l) && w > 0 {
				value = scalarNode(l[at:], line, at+1)
			}
			if value == nil {
				return nil
			}
			m.Content = append(m.Content, key, value)
		}
	}
	if pending != nil || len(top.Content) == 0 {
		return nil
	}
	doc.Line, doc.Column = top.Line, top.Column
	return doc
}

// flowMapping reads the one-line flow mapping of plain words at l[at:],
// which must end the line; nil when it is not one.
func flowMapping(l []byte, at, line int) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: line, Column: at + 1}
	i := at + 1
	skip := func() {
		for i < len(l) && l[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(l) && l[i] == '}' {
		i++
		if i != len(l) {
			return nil
		}
		return m
	}
	for {
		skip()
		k := wordLen(l[i:])
		if k == 0 || i+k+1 >= len(l) || l[i+k] != ':' || l[i+k+1] != ' ' {
			return nil
		}
		key := scalarNode(l[i:i+k], line, i+1)
		for j := 0; j < len(m.Content); j += 2 {
			if m.Content[j].Value == key.Value {
				return nil
			}
		}
		i += k + 1
		skip()
		w := wordLen(l[i:])
		if w == 0 {
			return nil
		}
		m.Content = append(m.Content, key, scalarNode(l[i:i+w], line, i+1))
		i += w
		skip()
		if i >= len(l) {
			return nil
		}
		switch l[i] {
		case ',':
			i++
			if i >= len(l) || l[i] != ' ' {
				return nil
			}
		case '}':
			if i+1 != len(l) {
				return nil
			}
			return m
		default:
			return nil
		}
	}
}

// wordLen is the length of the plain word b starts with: a letter or
// digit, then letters, digits and . _ / -; 0 when b starts with none.
func wordLen(b []byte) int {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '/' && c != '-') {
			break
		}
	}
	return i
}

// scalarNode is the plain scalar word at line and column, tagged as the
// parser resolves it.
func scalarNode(word []byte, line, column int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: string(word), Line: line, Column: column}
	n.Tag = n.ShortTag()
	return n
}
