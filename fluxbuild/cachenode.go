package fluxbuild

import (
	"encoding/binary"
	"errors"

	"go.yaml.in/yaml/v3"
)

// The build cache keeps kustomize's objects as their YAML node trees,
// node for node: kind, style, tag, value, anchor, comments, line and
// column. Printing them as YAML and parsing that again would give the same
// YAML but not the same nodes (a parsed node has the line it has in the
// printed text, not the line kustomize read it from, and a tag the parser
// resolves where kustomize left none), and lint reads those lines; it
// would also cost a YAML parse per hit, which is most of what the cache
// saves.

// errAlias: a node tree with an alias is not kept (kustomize expands
// anchors as it reads, so a build leaves none).
var errAlias = errors.New("an alias node")

// maxDepth bounds the nesting a cache entry may hold, so a corrupt entry
// cannot exhaust the stack; kustomize's own YAML parser stops far sooner.
const maxDepth = 10000

func appendNode(b []byte, n *yaml.Node, depth int) ([]byte, error) {
	if n == nil {
		return nil, errors.New("a nil node")
	}
	if n.Kind == yaml.AliasNode || n.Alias != nil {
		return nil, errAlias
	}
	if depth > maxDepth {
		return nil, errors.New("nodes nested too deep")
	}
	b = binary.AppendUvarint(b, uint64(n.Kind))
	b = binary.AppendUvarint(b, uint64(n.Style))
	for _, s := range []string{n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendVarint(b, int64(n.Line))
	b = binary.AppendVarint(b, int64(n.Column))
	b = binary.AppendUvarint(b, uint64(len(n.Content)))
	var err error
	for _, c := range n.Content {
		if b, err = appendNode(b, c, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// nodeReader reads what appendNode wrote.
type nodeReader struct {
	b   []byte
	err error
	// short holds the short strings read so far: tags, keys and most
	// values repeat across a build's objects, and are allocated once.
	short map[string]string
}

func (r *nodeReader) uvarint() uint64 { return readNumber(r, binary.Uvarint) }

func (r *nodeReader) varint() int { return int(readNumber(r, binary.Varint)) }

// readNumber reads a number with read (binary.Uvarint or binary.Varint).
func readNumber[T uint64 | int64](r *nodeReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.err = errors.New("truncated number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *nodeReader) string() string {
	b := r.take("string")
	if len(b) == 0 {
		return ""
	}
	if len(b) > 32 {
		return string(b)
	}
	if s, ok := r.short[string(b)]; ok {
		return s
	}
	if r.short == nil {
		r.short = map[string]string{}
	}
	s := string(b)
	r.short[s] = s
	return s
}

// bytes reads a length and that many bytes.
func (r *nodeReader) bytes() []byte { return r.take("bytes") }

// take reads a length and that many bytes, what says of what in an error.
func (r *nodeReader) take(what string) []byte {
	l := r.uvarint()
	if r.err != nil {
		return nil
	}
	if l > uint64(len(r.b)) {
		r.err = errors.New("truncated " + what)
		return nil
	}
	b := r.b[:l]
	r.b = r.b[l:]
	return b
}

func (r *nodeReader) node(depth int) *yaml.Node {
	if depth > maxDepth {
		r.err = errors.New("nodes nested too deep")
		return nil
	}
	n := &yaml.Node{Kind: yaml.Kind(r.uvarint()), Style: yaml.Style(r.uvarint())}
	n.Tag, n.Value, n.Anchor = r.string(), r.string(), r.string()
	n.HeadComment, n.LineComment, n.FootComment = r.string(), r.string(), r.string()
	n.Line, n.Column = r.varint(), r.varint()
	count := r.uvarint()
	if r.err != nil {
		return nil
	}
	if count > uint64(len(r.b)) {
		r.err = errors.New("node count out of range")
		return nil
	}
	if count > 0 {
		n.Content = make([]*yaml.Node, 0, count)
		for i := uint64(0); i < count && r.err == nil; i++ {
			n.Content = append(n.Content, r.node(depth+1))
		}
	}
	return n
}
