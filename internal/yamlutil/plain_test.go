package yamlutil_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// plainCases are documents of the shapes DecodePlain reads, and of shapes
// next to them that it must leave to the parser (or read as the parser
// does).
var plainCases = []string{
	// Kubernetes objects as people write them.
	"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n  labels: {app: web, tier: front-end}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/web:v1.2\n          ports: [{containerPort: 8080}]\n          args: [--port, \"8080\", '--x']\n",
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  level: \"3\"\n  cluster: ${cluster_name}\n  url: https://example.com/a?b=c&d=e\n  quote: 'it''s'\n  sentence: hello world, again\n",
	"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n    targetPort: 8080\n    protocol: TCP\n  - port: 443\n  selector:\n    app: s\n",
	"\n\nkind: K\n\napiVersion: v1\nmetadata:\n    name: s-1\n    annotations:\n      example.com/a: 'x'\n      \"b\": \"y\"\n      'c d': e\n",
	"metadata:\n  labels:\n    n: 1\n    b: true\n    z: null\n    f: 1.5\n    t: 2001-12-14\n    o: 0o17\n    x: 0x1F\n    e: 1e3\n    i: .inf\n    tilde: ~\n    neg: -1\n    dash: -v\n  name: x\n",
	"a: {}\nb: []\nc: [a, [b, c], {d: e}]\nd: {e: [f]}\ne: [ a ,b ]\nf: {g: 'h', i: \"j\"}\n",
	"a:\n- b\n- c\nd:\n  - e: f\n    g:\n    - h\n    i: j\n  - k\n",
	"  a: 1\n  b: 2\n",
	"- a\n- b: c\n",
	"a: b\n\n\nc: d\n",
	"a: b   \nc:   d\n",
	"a: ghcr.io/x:v1\nb: http://x:80/y\nc: a:b:c\nd: x,y\ne: (x)\nf: =\ng: +1\nh: ;\n",
	"a: b\na: c\n",
	"a: {b: c, b: d}\n",
	"1: a\ntrue: b\nnull: c\n",
	"a: [ghcr.io/x:v1, http://h/p, a:b]\n",
	"a: 'x'\nb: ''\nc: \"\"\nd: '\"'\ne: \"'\"\n",
	"a: x \"y\" z\nb: x 'y'\nc: x [y] {z}\nd: x - y\ne: x -y\nf: x :y\n",
	"---\n# yaml-language-server: $schema=https://example.com/s.json\napiVersion: v1\nkind: K\n",
	"\n# c1  \n#c2\n   #  c3\napiVersion: v1\n",
	"---\n\n# c\n'a': b\n",
	"#\na: b\n",
	// Shapes left to the parser.
	"a: b # comment\n",
	"# head\n\na: b\n",
	"---\n# c1\n\napiVersion: v1\n",
	"# c1\n\n# c2\napiVersion: v1\n",
	"# c1\n---\n# c2\napiVersion: v1\n",
	"# c\n  a: b\n",
	"# c\n- a\n",
	"a: b\n# c\nc: d\n",
	"a: b\n# c\n",
	"a:\n  b: c\n   d: e\n",
	"a:\nb: c\n",
	"a: b\n  c\n",
	"a: |\n  x\n",
	"a: >-\n  x\n",
	"a: &x b\nc: *x\n",
	"a: !!str 1\n",
	"a: \"x\\ny\"\n",
	"a: \"x\n  y\"\n",
	"a: [b,\n  c]\n",
	"a: {b: c,}\n",
	"a: [b, ]\n",
	"a: b: c\n",
	"a: b:\n",
	"a:b\n",
	"- - a\n",
	"-\n  a: b\n",
	"? a\n: b\n",
	"a:\n\tb: c\n",
	"a: b\r\n",
	"a: é\n",
	"---\n---\na: b\n",
	"--- a: b\n",
	"a: b\n...\n",
	"%YAML 1.2\n---\na: b\n",
	"a: [b: c]\n",
	"a: {b}\n",
	"a: {b: }\n",
	"a: {b:c}\n",
	"a: [a b]\n",
	"a: - b\n",
	"a: @b\n",
	"a: `b`\n",
	"a: 'b\n",
	"a: 'b' c\n",
	"a: [b] c\n",
	"<<: {a: b}\n",
	"a\n",
	"",
	"\n\n",
	"a: b\n- c\n",
	"- a\nb: c\n",
	"a:\n  - b\n c: d\n",
	"a:\n- b\n  - c\n",
}

// TestDecodePlain: every document DecodePlain reads, it reads as the
// parser does, node for node; and it reads the manifest shapes.
func TestDecodePlain(t *testing.T) {
	read := 0
	for _, c := range plainCases {
		if checkPlain(t, c, 0) {
			read++
		}
		checkPlain(t, c, 7)
	}
	assert.Equal(t, 22, read, "the first 22 cases are of the plain shape")
	for i, c := range plainCases[:22] {
		assert.NotNil(t, yamlutil.DecodePlain([]byte(c), 0), "case %d: %q", i, c)
	}
}

func FuzzDecodePlain(f *testing.F) {
	for _, c := range plainCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkPlain(t, text, 3)
	})
}

// checkPlain decodes text with DecodePlain and, when it reads it, holds
// the document to the parser's: the first document of text, its lines
// moved down by line.
func checkPlain(t *testing.T, text string, line int) bool {
	t.Helper()
	got := yamlutil.DecodePlain([]byte(text), line)
	if got == nil {
		return false
	}
	var want yaml.Node
	err := yaml.NewDecoder(bytes.NewReader([]byte(text))).Decode(&want)
	if errors.Is(err, io.EOF) {
		t.Fatalf("DecodePlain read %q, which holds no document", text)
	}
	require.NoError(t, err, "DecodePlain read %q, which the parser refuses", text)
	shift(&want, line)
	require.Equal(t, &want, got, "%q", text)
	return true
}

func shift(n *yaml.Node, lines int) {
	n.Line += lines
	for _, c := range n.Content {
		shift(c, lines)
	}
}

// BenchmarkDecodePlain decodes a Deployment of the plain shape by hand and
// with the parser:
//
//	go test ./internal/yamlutil -run '^$' -bench DecodePlain
func BenchmarkDecodePlain(b *testing.B) {
	text := []byte(plainCases[0])
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if yamlutil.DecodePlain(text, 0) == nil {
				b.Fatal("not read")
			}
		}
	})
	b.Run("parser", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var n yaml.Node
			if err := yaml.NewDecoder(bytes.NewReader(text)).Decode(&n); err != nil {
				b.Fatal(err)
			}
		}
	})
}
