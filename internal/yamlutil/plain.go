package yamlutil

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file decodes the plain YAML most Kubernetes manifests are written
// in without go.yaml.in/yaml/v3's scanner, parser and event queue, which
// cost several times what building the nodes costs. It decodes only a
// shape it can tell apart line by line, and says "not mine" (nil) for
// anything else, so the parser reads that with its errors and comments:
//
//   - printable ASCII only: no tabs, carriage returns or non-ASCII
//     (yaml.v3 counts columns in runes);
//   - no comments but the lines right above the first key (the
//     yaml-language-server line most files start with), which are its
//     head comment;
//   - block mappings whose keys are plain words or one-line quoted
//     strings, and block sequences, the sequence of a key possibly at the
//     key's own indentation and its items possibly compact mappings
//     (- name: app);
//   - one-line values: a plain scalar (with no ": " and not ending in a
//     colon, so it cannot be a mapping or continue on the next line),
//     a quoted string without escapes, or a one-line flow mapping or
//     sequence of plain words and quoted strings;
//   - no anchors, aliases, tags, block scalars, directives, empty values
//     (null by absence) or document markers but a leading ---.
//
// TestDecodePlain and FuzzDecodePlain hold every node it makes to the
// parser's: kind, style, tag, value, line and column.

// maxPlainDepth bounds the nesting DecodePlain reads; deeper documents are
// left to the parser, which has its own limits and errors.
const maxPlainDepth = 64

// maxKey is the longest key DecodePlain reads. The parser refuses a
// simple key longer than 1024 characters.
const maxKey = 1000

// DecodePlain decodes text, one YAML document, as a yaml.v3 Decoder
// decodes it into a Node, lines counting from line+1, when text has the
// plain shape described above; otherwise it returns nil, and the caller
// runs the parser. The values of the scalars share one copy of text.
func DecodePlain(text []byte, line int) *yaml.Node {
	d := &plainDecoder{src: string(text), line: line}
	if !d.split() || len(d.lines) == 0 {
		return nil
	}
	first := d.lines[0]
	root := d.block(first.indent, first.indent, 0)
	if root == nil || d.i != len(d.lines) {
		return nil
	}
	if d.comment != "" {
		root.Content[0].HeadComment = d.comment
	}
	doc := d.node(yaml.DocumentNode, "", root.Line-line, root.Column)
	if d.marker > 0 {
		doc.Line, doc.Column = line+d.marker, 1
	}
	doc.Content = []*yaml.Node{root}
	return doc
}

// plainLine is one line of text with content: its offsets in src (end
// after its last non-space), its indentation and its number.
type plainLine struct {
	start, end, indent, num int
}

type plainDecoder struct {
	src     string
	line    int // lines before src
	lines   []plainLine
	i       int    // the line being read
	marker  int    // the line of a leading ---, or 0
	comment string // the comment lines before the first key

	slab  []yaml.Node  // nodes are carved from it
	stack []*yaml.Node // children of the collections being read
	ptrs  []*yaml.Node // Content slices are carved from it
}

// split finds the lines with content, and the comment lines before the
// first of them; false when text has a byte or a line DecodePlain does
// not read: a document marker other than a leading ---, a comment
// elsewhere, or comment lines that blank lines part from each other or
// from the first key, whose head comment they are (yaml.v3 gives those
// to the document, in part).
func (d *plainDecoder) split() bool {
	nodes := 1 // the document; the nodes of the lines are counted below, at most
	var comments []plainLine
	d.lines = make([]plainLine, 0, strings.Count(d.src, "\n")+1)
	for at, num := 0, 1; at < len(d.src); num++ {
		end := at
		for end < len(d.src) && d.src[end] != '\n' {
			if c := d.src[end]; c < ' ' || c > '~' {
				return false
			}
			end++
		}
		next, full := end+1, end
		for end > at && d.src[end-1] == ' ' {
			end--
		}
		indent := 0
		for at+indent < end && d.src[at+indent] == ' ' {
			indent++
		}
		l := d.src[at:end]
		switch {
		case at+indent == end:
			if len(comments) > 0 && len(d.lines) == 0 {
				return false
			}
		case l[indent] == '#':
			if len(d.lines) > 0 {
				return false
			}
			comments = append(comments, plainLine{start: at + indent, end: full, indent: indent, num: num})
		case len(l) >= 3 && (l[:3] == "---" || l[:3] == "...") && (len(l) == 3 || l[3] == ' '):
			if l[:3] != "---" || len(d.lines) > 0 || d.marker > 0 || len(comments) > 0 || len(l) > 3 {
				return false
			}
			d.marker = num
		default:
			if len(d.lines) == 0 && len(comments) > 0 && (indent > 0 || dash(l, 0)) {
				return false
			}
			d.lines = append(d.lines, plainLine{start: at, end: end, indent: indent, num: num})
			nodes += 2 // a key and its value, or an entry
			for i := indent; i < len(l); i++ {
				switch l[i] {
				case '#':
					return false
				case '{', '[':
					nodes += 3 // the collection, and its first entry
				case ',':
					nodes += 2
				case '-':
					if dash(l, i) {
						nodes += 2 // the sequence, or the entry's mapping
					}
				}
			}
		}
		at = next
	}
	d.comment = d.join(comments)
	d.slab = make([]yaml.Node, 0, nodes)
	d.ptrs = make([]*yaml.Node, 0, nodes)
	return true
}

// join is the text of comment lines, each from its #, one a line.
func (d *plainDecoder) join(comments []plainLine) string {
	if len(comments) == 0 {
		return ""
	}
	indented := false
	for _, c := range comments {
		indented = indented || c.indent > 0
	}
	if !indented {
		return d.src[comments[0].start:comments[len(comments)-1].end]
	}
	var b strings.Builder
	for i, c := range comments {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.src[c.start:c.end])
	}
	return b.String()
}

// node returns a new node at line num of src and 1-based column.
func (d *plainDecoder) node(kind yaml.Kind, tag string, num, column int) *yaml.Node {
	if len(d.slab) == cap(d.slab) {
		d.slab = make([]yaml.Node, 0, 16)
	}
	d.slab = d.slab[:len(d.slab)+1]
	n := &d.slab[len(d.slab)-1]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, d.line+num, column
	return n
}

// close gives n the children pushed on the stack since mark.
func (d *plainDecoder) close(n *yaml.Node, mark int) {
	kids := d.stack[mark:]
	if len(kids) > 0 {
		if len(d.ptrs)+len(kids) > cap(d.ptrs) {
			d.ptrs = make([]*yaml.Node, 0, max(len(kids), 64))
		}
		at := len(d.ptrs)
		d.ptrs = append(d.ptrs, kids...)
		n.Content = d.ptrs[at:len(d.ptrs):len(d.ptrs)]
	}
	clear(kids)
	d.stack = d.stack[:mark]
}

// text is line l's text.
func (d *plainDecoder) text(l plainLine) string { return d.src[l.start:l.end] }

// dash reports whether s, a line's text, has a block sequence entry
// indicator at column col.
func dash(s string, col int) bool {
	return col < len(s) && s[col] == '-' && (col+1 == len(s) || s[col+1] == ' ')
}

// block reads the block node that starts at column col of the current
// line, whose indentation is indent: a sequence or a mapping, nested
// depth deep.
func (d *plainDecoder) block(col, indent, depth int) *yaml.Node {
	if depth > maxPlainDepth {
		return nil
	}
	if dash(d.text(d.lines[d.i]), col) {
		if col != indent {
			return nil // - - x
		}
		return d.sequence(col, depth)
	}
	return d.mapping(col, depth)
}

// keyEnd returns where the colon after the key of a block mapping entry
// at s[col:] ends: a plain word or a quoted string, then a colon that ends
// s or is followed by a space; 0 when s[col:] starts no entry.
func keyEnd(s string, col int) int {
	end := scalarEnd(s, col)
	if end == 0 || end >= len(s) || s[end] != ':' || end+1 < len(s) && s[end+1] != ' ' || end-col > maxKey {
		return 0
	}
	return end + 1
}

// mapping reads the block mapping whose first key is at column col of
// the current line; the lines of the rest of its keys are indented by
// col.
func (d *plainDecoder) mapping(col, depth int) *yaml.Node {
	l := d.lines[d.i]
	m := d.node(yaml.MappingNode, "!!map", l.num, col+1)
	mark := len(d.stack)
	for at := col; ; at = col {
		l = d.lines[d.i]
		s := d.text(l)
		end := keyEnd(s, at)
		if end == 0 {
			return nil
		}
		k := d.scalar(s, at, end-1, l.num)
		for end < len(s) && s[end] == ' ' {
			end++
		}
		var v *yaml.Node
		if end < len(s) {
			if v = d.inline(s, end, l.num, depth+1); v == nil {
				return nil
			}
			d.i++
		} else {
			// The value is the block below: deeper, or a sequence at the
			// key's own indentation.
			d.i++
			if d.i == len(d.lines) {
				return nil
			}
			next := d.lines[d.i]
			switch ns := d.text(next); {
			case next.indent > col:
				v = d.block(next.indent, next.indent, depth+1)
			case next.indent == col && dash(ns, col):
				v = d.sequence(col, depth+1)
			}
			if v == nil {
				return nil
			}
		}
		d.stack = append(d.stack, k, v)
		if d.i == len(d.lines) || d.lines[d.i].indent < col {
			break
		}
		if d.lines[d.i].indent > col {
			return nil // a scalar going on, or not YAML
		}
	}
	d.close(m, mark)
	return m
}

// sequence reads the block sequence whose first entry indicator is at
// column col of the current line, which is indented by col.
func (d *plainDecoder) sequence(col, depth int) *yaml.Node {
	l := d.lines[d.i]
	seq := d.node(yaml.SequenceNode, "!!seq", l.num, col+1)
	mark := len(d.stack)
	for {
		l = d.lines[d.i]
		s := d.text(l)
		if l.indent != col || !dash(s, col) {
			return nil
		}
		at := col + 1
		for at < len(s) && s[at] == ' ' {
			at++
		}
		if at == len(s) || dash(s, at) {
			return nil // an entry on the lines below, or - - x
		}
		var item *yaml.Node
		if keyEnd(s, at) > 0 {
			item = d.mapping(at, depth+1)
		} else {
			item = d.inline(s, at, l.num, depth+1)
			d.i++
		}
		if item == nil {
			return nil
		}
		d.stack = append(d.stack, item)
		if d.i == len(d.lines) {
			break
		}
		next := d.lines[d.i]
		if next.indent < col || next.indent == col && !dash(d.text(next), col) {
			break // the sequence ends; what follows is its parent's
		}
		if next.indent > col {
			return nil
		}
	}
	d.close(seq, mark)
	return seq
}

// inline reads the value that starts at s[at:] and ends s: a flow
// collection, a quoted string or a plain scalar.
func (d *plainDecoder) inline(s string, at, num, depth int) *yaml.Node {
	var n *yaml.Node
	end := 0
	switch s[at] {
	case '{', '[':
		n, end = d.flow(s, at, num, depth)
	case '"', '\'':
		if end = scalarEnd(s, at); end > 0 {
			n = d.scalar(s, at, end, num)
		}
	default:
		if !plainStart(s, at) {
			return nil
		}
		v := s[at:]
		for i := 0; i < len(v); i++ {
			if v[i] == ':' && (i+1 == len(v) || v[i+1] == ' ') {
				return nil // a mapping on the same line, or not YAML
			}
		}
		n = d.node(yaml.ScalarNode, plainTag(v), num, at+1)
		n.Value = v
		end = len(s)
	}
	if n == nil || end != len(s) {
		return nil
	}
	return n
}

// plainStart reports whether a block plain scalar may start at s[at] in
// the shapes DecodePlain reads.
func plainStart(s string, at int) bool {
	c := s[at]
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.', c == '/', c == '_', c == '$', c == '~', c == '+', c == '(', c == '=', c == ';':
		return true
	case c == '-':
		return at+1 < len(s) && s[at+1] != ' '
	}
	return false
}

// scalarEnd returns the index after the scalar at s[at:] that may be a
// key: a quoted string on one line without escapes (a single-quoted one
// may double its quotes), or a plain word (wordLen); 0 when there is
// none.
func scalarEnd(s string, at int) int {
	q := s[at]
	if q != '"' && q != '\'' {
		if w := wordLen(s[at:]); w > 0 {
			return at + w
		}
		return 0
	}
	for end := at + 1; end < len(s); end++ {
		if s[end] == '\\' && q == '"' {
			return 0
		}
		if s[end] == q {
			if q == '\'' && end+1 < len(s) && s[end+1] == '\'' {
				end++
				continue
			}
			return end + 1
		}
	}
	return 0 // it goes on on the next line, or it is not YAML
}

// scalar is the node of the scalar scalarEnd found at s[at:end], on line
// num.
func (d *plainDecoder) scalar(s string, at, end, num int) *yaml.Node {
	switch s[at] {
	case '"':
		n := d.node(yaml.ScalarNode, "!!str", num, at+1)
		n.Style, n.Value = yaml.DoubleQuotedStyle, s[at+1:end-1]
		return n
	case '\'':
		n := d.node(yaml.ScalarNode, "!!str", num, at+1)
		n.Style, n.Value = yaml.SingleQuotedStyle, s[at+1:end-1]
		if strings.Contains(n.Value, "''") {
			n.Value = strings.ReplaceAll(n.Value, "''", "'")
		}
		return n
	}
	n := d.node(yaml.ScalarNode, plainTag(s[at:end]), num, at+1)
	n.Value = s[at:end]
	return n
}

// plainTag is the tag the parser resolves the plain scalar v to
// (Node.ShortTag), calling its resolution, which allocates, only for what
// may be a number or a timestamp: a string unless it is one of the bools
// and nulls the resolution's table holds.
func plainTag(v string) string {
	switch c := v[0]; {
	case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
		n := yaml.Node{Kind: yaml.ScalarNode, Value: v}
		return n.ShortTag()
	}
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "~", "null", "Null", "NULL":
		return "!!null"
	}
	return "!!str"
}

// flow reads the one-line flow mapping or sequence at s[at:] of plain
// words, quoted strings and flow collections; it returns the node and the
// index after it, or nil.
func (d *plainDecoder) flow(s string, at, num, depth int) (*yaml.Node, int) {
	if depth > maxPlainDepth {
		return nil, 0
	}
	mapping := s[at] == '{'
	var n *yaml.Node
	closer := byte(']')
	if mapping {
		n = d.node(yaml.MappingNode, "!!map", num, at+1)
		closer = '}'
	} else {
		n = d.node(yaml.SequenceNode, "!!seq", num, at+1)
	}
	n.Style = yaml.FlowStyle
	mark := len(d.stack)
	i := at + 1
	skip := func() {
		for i < len(s) && s[i] == ' ' {
			i++
		}
	}
	skip()
	if i < len(s) && s[i] == closer {
		return n, i + 1
	}
	for {
		skip()
		if i == len(s) {
			return nil, 0
		}
		if mapping {
			end := scalarEnd(s, i)
			if end == 0 || end+1 >= len(s) || s[end] != ':' || s[end+1] != ' ' || end-i > maxKey {
				return nil, 0
			}
			d.stack = append(d.stack, d.scalar(s, i, end, num))
			i = end + 1
			skip()
		}
		v, end := d.flowValue(s, i, num, depth)
		if v == nil {
			return nil, 0
		}
		d.stack = append(d.stack, v)
		i = end
		skip()
		if i == len(s) {
			return nil, 0
		}
		switch s[i] {
		case ',':
			i++
			skip()
			if i == len(s) || s[i] == closer || s[i] == ',' {
				return nil, 0 // a trailing or empty entry
			}
		case closer:
			d.close(n, mark)
			return n, i + 1
		default:
			return nil, 0
		}
	}
}

// flowValue reads a value inside a flow collection at s[i:]: a nested
// collection, a quoted string, or a plain word, which may start with a
// dash (--port) and which a colon may join when a word character follows
// it (ghcr.io/app:v1).
func (d *plainDecoder) flowValue(s string, i, num, depth int) (*yaml.Node, int) {
	if i >= len(s) {
		return nil, 0
	}
	switch s[i] {
	case '{', '[':
		return d.flow(s, i, num, depth+1)
	case '"', '\'':
		end := scalarEnd(s, i)
		if end == 0 {
			return nil, 0
		}
		return d.scalar(s, i, end, num), end
	}
	if !isAlnum(s[i]) && (s[i] != '-' || i+1 == len(s) || !isAlnum(s[i+1]) && s[i+1] != '-') {
		return nil, 0
	}
	end := i + 1
	for end < len(s) {
		c := s[end]
		if isAlnum(c) || c == '.' || c == '_' || c == '/' || c == '-' ||
			c == ':' && end+1 < len(s) && (isAlnum(s[end+1]) || s[end+1] == '/') {
			end++
			continue
		}
		break
	}
	if end < len(s) && s[end] == ':' {
		return nil, 0 // a key: a single-pair mapping in a sequence
	}
	n := d.node(yaml.ScalarNode, plainTag(s[i:end]), num, i+1)
	n.Value = s[i:end]
	return n, end
}

// wordLen is the length of the plain word b starts with: a letter or
// digit, then letters, digits and . _ / -; 0 when b starts with none.
func wordLen(b string) int {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		if !isAlnum(c) && (i == 0 || c != '.' && c != '_' && c != '/' && c != '-') {
			break
		}
	}
	return i
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
