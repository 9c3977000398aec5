package fluxbuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// This file reads a manifest file the way kustomize reads a resource file,
// keeping what kustomize drops: the line of every object in the file.
// kustomize reads with kio.FromBytes (kio.ByteReader) and then
// resource.Factory.RNodesFromBytes (dropBadNodes, inlineAnyEmbeddedLists);
// it decodes each document on its own, so its nodes' lines count from the
// document, and a List's items lose theirs in a JSON round trip. The steps
// below mirror those, calling kyaml's own checks where kyaml exports them;
// TestPlainMatchesKustomize and FuzzPlainMatchesKustomize hold the two
// together. A library should offer this; none does.

// documentSeparator is kio.ByteReader's: any line that starts with ---.
// It is compiled on first use: package inits run for every fluxpack command.
var documentSeparator = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n---.*\n`) })

var newline = []byte{'\n'}

// decodePlain is yamlutil.DecodePlain; tests turn it off to compare.
var decodePlain = yamlutil.DecodePlain

// readManifests returns the objects of a manifest file, rel naming it, as
// kustomize reads them, their nodes' lines counting from the top of the
// file.
func readManifests(rel string, data []byte) ([]*yaml.Node, error) {
	nodes, _, err := readManifestsFor(rel, data, nil)
	return nodes, err
}

// document is one part of a manifest file as kio.ByteReader splits it.
type document struct {
	text []byte
	line int // lines before it in the file
}

// readManifestsFor is readManifests, reading for its identity only
// (identityNode) an object of a kind needs says needs no more, when the
// file is one a single decoder reads (streamSafe); partial holds the
// nodes so read. With needs nil, every object is read whole. In such a
// file, documents of the plain shape most manifests have are decoded by
// hand (yamlutil.DecodePlain): each on its own in an identity read, all or
// none in a whole read, which otherwise runs one parser for the file.
func readManifestsFor(rel string, data []byte, needs func(apiVersion, kind string) bool) (read []*yaml.Node, partial map[*yaml.Node]bool, err error) {
	return readManifestsAs(rel, data, needs, false)
}

// readManifestsAs is readManifestsFor; with lines set, for where objects
// are and no more (readIdentities), an identity-only read is also made of
// a document that holds a $ or of a file with anchors (each document of
// the file is read on its own, as kio.ByteReader reads it), and an error
// is the one of the part it is in.
func readManifestsAs(rel string, data []byte, needs func(apiVersion, kind string) bool, lines bool) (read []*yaml.Node, partial map[*yaml.Node]bool, err error) {
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), newline)
	}
	if len(data) == 0 {
		return nil, nil, nil
	}
	// kio.ByteReader: split at the separators, each document keeping its
	// newline, and decode the first YAML document of each.
	seps := documentSeparator().FindAllIndex(data, -1)
	docs := make([]document, 0, len(seps)+1)
	prev, line := 0, 0
	for _, loc := range seps {
		sep := data[loc[0]:loc[1]]
		if after := bytes.TrimSpace(sep[4:]); len(after) > 0 && after[0] != '#' {
			return nil, nil, &FileError{Path: rel, Line: line + bytes.Count(data[prev:loc[0]], newline) + 2,
				Err: fmt.Errorf("invalid document separator: %s", bytes.TrimSpace(sep))}
		}
		docs = append(docs, document{text: data[prev : loc[0]+1], line: line})
		line += bytes.Count(data[prev:loc[1]], newline)
		prev = loc[1]
	}
	docs = append(docs, document{text: data[prev:], line: line})

	switch safe := splitSafe(data, seps) && (lines || !mayInflate(data)); {
	case safe && needs != nil:
		// Each document on its own is what the stream gives: read it for
		// its identity, or by hand (yamlutil.DecodePlain), or with the
		// parser.
		for _, d := range docs {
			n := identityNode(d.text, d.line, needs, lines)
			if n != nil {
				if partial == nil {
					partial = map[*yaml.Node]bool{}
				}
				partial[n.Content[0]] = true
			} else {
				n = decodePlain(d.text, d.line)
			}
			if n != nil {
				read, err = appendDocument(rel, read, n, len(docs))
			} else {
				read, err = readDocument(rel, read, d.text, d.line, len(docs))
			}
			if err != nil {
				if !lines {
					// The error as the whole read gives it, lines and all.
					partial = nil
					read, err = readStream(rel, data, docs)
				}
				break
			}
		}
	case safe:
		// By hand when every document is plain; otherwise one parser for
		// the file, cheaper than one a document.
		plain := make([]*yaml.Node, 0, len(docs))
		for _, d := range docs {
			if len(bytes.TrimSpace(d.text)) == 0 {
				continue // a trailing ---, say: no object either way
			}
			n := decodePlain(d.text, d.line)
			if n == nil {
				plain = nil
				break
			}
			plain = append(plain, n)
		}
		for _, n := range plain {
			if read, err = appendDocument(rel, read, n, len(docs)); err != nil {
				break
			}
		}
		if plain == nil || err != nil {
			read, err = readStream(rel, data, docs)
		}
	default:
		for _, d := range docs {
			if read, err = readDocument(rel, read, d.text, d.line, len(docs)); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	read, err = dropBadNodes(rel, read)
	if err != nil {
		return nil, nil, err
	}
	read, err = inlineLists(rel, read)
	return read, partial, err
}

// readDocument appends the objects of one document as kio.ByteReader
// reads them: the first YAML document of text, which starts after line
// lines of the file; parts is how many documents the file was split into.
func readDocument(rel string, read []*yaml.Node, text []byte, line, parts int) ([]*yaml.Node, error) {
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(text)).Decode(&doc)
	if errors.Is(err, io.EOF) {
		return read, nil
	}
	if err != nil {
		return nil, syntaxError(rel, text, err, line)
	}
	shiftLines(&doc, line)
	if mayInflate(text) {
		// kio.FromBytes inflates aliases and merge keys, and crashes on an
		// alias inside its own anchor.
		if a := yamlutil.AliasCycle(&doc); a != nil {
			return nil, &FileError{Path: rel, Line: a.Line, Err: yamlutil.Error(a)}
		}
		rn := kyaml.NewRNode(&doc)
		if err := rn.DeAnchor(); err != nil {
			return nil, &FileError{Path: rel, Line: doc.Line, Err: err}
		}
	}
	return appendDocument(rel, read, &doc, parts)
}

// appendDocument appends what kio.ByteReader makes of one decoded
// document: nothing for an empty one, a lone List's or ResourceList's
// items, or the object.
func appendDocument(rel string, read []*yaml.Node, doc *yaml.Node, parts int) ([]*yaml.Node, error) {
	if kyaml.IsYNodeEmptyDoc(doc) {
		return read, nil
	}
	rn := kyaml.NewRNode(doc)
	if parts == 1 {
		meta, err := rn.GetMeta()
		if err != nil && !errors.Is(err, kyaml.ErrMissingMetadata) {
			return nil, &FileError{Path: rel, Line: doc.Line, Err: err}
		}
		if (meta.Kind == "List" || meta.Kind == "ResourceList") && (rn.Field("items") != nil || rn.Field("functionConfig") != nil) {
			if items := rn.Field("items"); items != nil {
				read = append(read, items.Value.YNode().Content...)
			}
			return read, nil
		}
	}
	return append(read, rn.YNode()), nil
}

// streamSafe reports whether one decoder over the whole of data finds the
// documents kio.ByteReader finds by splitting it at seps and decoding each
// part on its own: every separator is a YAML document marker, and nothing
// else (a ... end marker, a directive, anchors, which aliases in another
// document might reach, merge keys, a byte order mark, a carriage return)
// can make the two differ.
func streamSafe(data []byte, seps [][]int) bool {
	return splitSafe(data, seps) && !mayInflate(data)
}

// splitSafe is streamSafe but for anchors and merge keys: each document
// read on its own is what kio.ByteReader reads (anchors reach no further
// than their document there).
func splitSafe(data []byte, seps [][]int) bool {
	for _, loc := range seps {
		if rest := data[loc[0]+4 : loc[1]-1]; len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
			return false
		}
	}
	return !bytes.HasPrefix(data, []byte("...")) && !bytes.Contains(data, []byte("\n...")) &&
		data[0] != '%' && !bytes.Contains(data, []byte("\n%")) &&
		bytes.IndexByte(data, '\r') < 0 &&
		!bytes.Contains(data[min(len(data), 3):], []byte("\xEF\xBB\xBF"))
}

// mayInflate reports whether text may hold what kio.FromBytes inflates
// (RNode.DeAnchor): an anchor (without one an alias cannot resolve, and
// the parse fails anyway) or a merge key, plain (<<) or tagged (merge).
// Build asks the same of a file before it hands it to kustomize whole.
func mayInflate(text []byte) bool {
	return bytes.IndexByte(text, '&') >= 0 || bytes.Contains(text, []byte("<<")) || bytes.Contains(text, []byte("merge"))
}

// readStream reads the documents of data, which splits into docs, with one
// decoder: the whole read of a file that is not all plain, and the error
// of one whose parts were read apart. When streamSafe holds, its objects
// are the ones readDocument gives for each part, but for where a comment
// next to a --- goes. A syntax error is the one of the part it is in, read
// alone as kustomize reads it (partError): the stream's decoder names the
// line where the document starts for an error anywhere in its top-level
// mapping.
func readStream(rel string, data []byte, docs []document) ([]*yaml.Node, error) {
	var read []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		doc := new(yaml.Node)
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			return read, nil
		}
		if err != nil {
			if perr := partError(rel, docs); perr != nil {
				return nil, perr
			}
			return nil, syntaxError(rel, data, err, 0)
		}
		if read, err = appendDocument(rel, read, doc, len(docs)); err != nil {
			return nil, err
		}
	}
}

// partError decodes each part alone and returns the first one's syntax
// error, or nil.
func partError(rel string, docs []document) error {
	for _, d := range docs {
		var n yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(d.text)).Decode(&n); err != nil && !errors.Is(err, io.EOF) {
			return syntaxError(rel, d.text, err, d.line)
		}
	}
	return nil
}

// syntaxError is the *FileError of err, decoding text, the part of rel
// that starts after line lines: its line counted from the top of the file
// (see yamlutil.ErrorLine), its message without the library's own line,
// which counts from the part and from 0 for some errors.
func syntaxError(rel string, text []byte, err error, line int) error {
	l := yamlutil.ErrorLineIn(text, err)
	if l > 0 {
		l += line
	}
	return &FileError{Path: rel, Line: l, Err: yamlutil.WithoutLine(err)}
}

// shiftLines moves the lines of n's tree down by lines.
func shiftLines(n *yaml.Node, lines int) {
	if lines == 0 {
		return
	}
	n.Line += lines
	for _, c := range n.Content {
		shiftLines(c, lines)
	}
}

// dropBadNodes is resource.Factory's: empty objects are left out, and an
// object without a kind, or without a name when it is not a List, is an
// error.
func dropBadNodes(rel string, nodes []*yaml.Node) ([]*yaml.Node, error) {
	out := nodes[:0]
	for _, n := range nodes {
		if kind := plainValue(yamlutil.Field(n, "kind")); kind != "" && (strings.HasSuffix(kind, "List") || plainValue(yamlutil.Field(yamlutil.Field(n, "metadata"), "name")) != "") {
			out = append(out, n) // what GetValidatedMetadata accepts, known without it
			continue
		}
		rn := kyaml.NewRNode(n)
		if rn.IsNilOrEmpty() {
			continue
		}
		if _, err := rn.GetValidatedMetadata(); err != nil {
			return nil, &FileError{Path: rel, Line: n.Line, Err: err}
		}
		out = append(out, n)
	}
	return out, nil
}

// plainValue is n's value when n is a scalar that is not null, as kyaml's
// GetMeta reads kind and name; "" otherwise.
func plainValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// inlineLists is resource.Factory's inlineAnyEmbeddedLists: a FooList with
// items stands for its items, which go to the end of the queue; one whose
// items are null stands for nothing.
func inlineLists(rel string, nodes []*yaml.Node) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for len(nodes) > 0 {
		n := nodes[0]
		nodes = nodes[1:]
		kind := plainValue(yamlutil.Field(n, "kind"))
		if !strings.HasSuffix(kind, "List") {
			out = append(out, n)
			continue
		}
		// kustomize decodes the list to Go values first.
		if k, v := duplicateKey(n); k != nil {
			return nil, &FileError{Path: rel, Line: k.Line, Err: fmt.Errorf("mapping key %q already defined at line %d", k.Value, v.Line)}
		}
		if !plainJSON(n, false) {
			if _, err := kyaml.NewRNode(n).Map(); err != nil {
				return nil, &FileError{Path: rel, Line: n.Line, Err: err}
			}
		}
		items := yamlutil.Field(n, "items")
		switch {
		case items == nil:
			out = append(out, n) // not a collection
			continue
		case items.Kind == yaml.ScalarNode && items.Tag == "!!null":
			continue // an empty list
		case items.Kind != yaml.SequenceNode:
			return nil, &FileError{Path: rel, Line: items.Line, Err: fmt.Errorf("expected array in %s/items", kind)}
		}
		// Each item goes through JSON and kio.FromBytes: null is nothing,
		// an empty map or list is dropped, and anything else must be an
		// object.
		var inner []*yaml.Node
		for _, it := range items.Content {
			if it.Kind == yaml.ScalarNode && it.Tag == "!!null" {
				continue
			}
			inner = append(inner, it)
		}
		inner, err := dropBadNodes(rel, inner)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, inner...)
	}
	return out, nil
}

// duplicateKey returns the first key of a mapping in n's tree that repeats
// an earlier key of that mapping, and the earlier one: go.yaml.in/yaml/v3
// refuses them when it decodes to Go values, which kustomize and Flux do
// with every object.
func duplicateKey(n *yaml.Node) (dup, first *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			for j := i + 2; j < len(n.Content); j += 2 {
				if a, b := n.Content[i], n.Content[j]; a.Kind == b.Kind && a.Value == b.Value {
					return b, a
				}
			}
		}
		fallthrough
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if d, f := duplicateKey(c); d != nil {
				return d, f
			}
		}
	}
	return nil, nil
}

// checkObject returns why Flux cannot turn n, an object, into JSON, as it
// does with every object it applies (kyaml's RNode.MarshalJSON: YAML out,
// Go values in, encoding/json), or nil. A repeated key is found by a walk;
// the conversion itself runs only for an object plainJSON is not sure of.
func checkObject(n *yaml.Node) error {
	if k, first := duplicateKey(n); k != nil {
		return fmt.Errorf("mapping key %q already defined at line %d", k.Value, first.Line)
	}
	if plainJSON(n, false) {
		return nil
	}
	_, err := kyaml.NewRNode(n).MarshalJSON()
	return err
}

// boolOrNull are the plain scalars go.yaml.in/yaml/v3 reads as a bool or
// null that start with a letter.
var boolOrNull = map[string]bool{"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true, "null": true, "Null": true, "NULL": true}

// plainJSON reports whether n's tree surely comes through that conversion:
// no explicit tags, every key a string, every value a string, a bool, null
// or a number JSON holds. False means "run the conversion", not "it fails":
// NaN, infinities, keys that are numbers or maps, timestamps and binary
// data are left to it.
func plainJSON(n *yaml.Node, key bool) bool {
	if n.Style&yaml.TaggedStyle != 0 {
		return false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "":
			// Set by kustomize (a namePrefix, say): it is written plain and
			// read back as the value resolves. One that starts with a
			// letter resolves to a string, a bool or null.
			v := n.Value
			return v != "" && ('a' <= v[0] && v[0] <= 'z' || 'A' <= v[0] && v[0] <= 'Z') && !(key && boolOrNull[v])
		case "!!str":
			return true
		case "!!null", "!!bool":
			return !key
		case "!!int":
			_, err := strconv.ParseInt(n.Value, 0, 64)
			return !key && err == nil
		case "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			return !key && err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
		}
		return false
	case yaml.MappingNode:
		if key {
			return false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !plainJSON(n.Content[i], true) || !plainJSON(n.Content[i+1], false) {
				return false
			}
		}
		return true
	case yaml.SequenceNode:
		if key {
			return false
		}
		for _, c := range n.Content {
			if !plainJSON(c, false) {
				return false
			}
		}
		return true
	}
	return false
}
