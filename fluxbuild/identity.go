package fluxbuild

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// This file reads an object for its identity only (WithIdentityOnly): its
// apiVersion, kind and metadata, decoded as go.yaml.in/yaml/v3 decodes
// them in the whole document (by hand where the lines are of the plain
// shape yamlutil.DecodePlain reads; by yaml.v3 otherwise), without
// decoding the rest.

// identityKeys are the top-level fields an identity-only node holds.
var identityKeys = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// readIdentities reads the objects of a manifest file as readManifests
// does, each for its identity where identityNode can: what kustomize's
// builds need to know of the files they read (which object is on which
// line), kustomize reading them whole itself.
func readIdentities(rel string, data []byte) ([]*yaml.Node, error) {
	nodes, _, err := readManifestsAs(rel, data, func(string, string) bool { return false }, true)
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
// With lines set (readIdentities: where the object is, nothing of its
// values), a $ does not matter, nor do anchors, unless the identity
// entries hold an alias or a merge key, which kustomize would inflate.
//
// The lines of the other entries are not decoded, so an error there
// (bad indentation, a repeated key, a value JSON cannot hold) goes
// unseen: the node answers what the object is, not whether Flux can
// apply it.
func identityNode(text []byte, line int, needs func(apiVersion, kind string) bool, lines bool) *yaml.Node {
	if !lines && bytes.IndexByte(text, '$') >= 0 {
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
	if lines && (bytes.IndexByte(mini, '*') >= 0 || bytes.Contains(mini, []byte("<<")) || bytes.Contains(mini, []byte("merge"))) {
		return nil
	}
	doc := yamlutil.DecodePlain(mini, 0)
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
