package substitute_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/substitute"
)

func readFile(t *testing.T, path string) substitute.File {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return substitute.File{Path: filepath.ToSlash(path), Data: data}
}

// TestCheck runs every check over a small platform and compares the
// findings with a golden file; each kind of finding must be among them.
func TestCheck(t *testing.T) {
	ks := readFile(t, "testdata/check/ks.yaml")
	vars := readFile(t, "testdata/check/vars.yaml")
	findings := substitute.CheckKustomization(ks)
	findings = append(findings, substitute.CheckSources(vars)...)
	values := map[string]string{
		"cluster_name": "prod-1", "replicas": "3", "tag": "0123", "version": "1.10",
		"feature": "on", "vpc_id": "vpc-123", "colon_value": "a: b",
	}
	findings = append(findings, substitute.Check([]substitute.File{
		readFile(t, "testdata/check/deploy.yaml"),
		readFile(t, "testdata/check/scripts.yaml"),
	}, substitute.Available{Values: values})...)

	var b strings.Builder
	for _, f := range findings {
		b.WriteString(f.String() + "\n")
	}
	testutil.Golden(t, "check/findings", []byte(b.String()))

	want := []struct {
		file, v string
		line    int
		sev     substitute.Severity
	}{
		{"testdata/check/ks.yaml", "yes", 13, substitute.SeverityError},          // YAML 1.1 boolean key
		{"testdata/check/ks.yaml", "replicas", 15, substitute.SeverityError},     // not a string
		{"testdata/check/ks.yaml", "vpc-id", 16, substitute.SeverityError},       // invalid name
		{"testdata/check/vars.yaml", "1st_subnet", 13, substitute.SeverityError}, // invalid name loaded
		{"testdata/check/deploy.yaml", "cluster_name", 13, substitute.SeverityHint},
		{"testdata/check/deploy.yaml", "version", 16, substitute.SeverityWarning}, // 1.10 → 1.1, quotes do not help
		{"testdata/check/deploy.yaml", "feature", 18, substitute.SeverityWarning}, // on → true
		{"testdata/check/deploy.yaml", "owner", 22, substitute.SeverityError},     // missing
		{"testdata/check/scripts.yaml", "HOME", 10, substitute.SeverityError},     // shell variable
		{"testdata/check/scripts.yaml", "DS_PROMETHEUS", 12, substitute.SeverityError},
		{"testdata/check/scripts.yaml", "", 13, substitute.SeverityError},            // ${my-var}
		{"testdata/check/scripts.yaml", "colon_value", 14, substitute.SeverityError}, // a: b breaks YAML
	}
	for _, w := range want {
		found := false
		for _, f := range findings {
			if f.File == w.file && f.Var == w.v && f.Line == w.line && f.Severity == w.sev {
				found = true
			}
		}
		assert.True(t, found, "Check: want a %s for %q at %s:%d; got:\n%s", w.sev, w.v, w.file, w.line, b.String())
	}
	for _, f := range findings {
		assert.NotEqual(t, "anything", f.Var, "an object with substitution disabled was checked: %s", f)
		assert.False(t, f.Var == "region", "a reference with a default was reported: %s", f)
		assert.False(t, f.Var == "tag", "${tag} inside a longer string is never retyped, yet was reported: %s", f)
		assert.False(t, f.Var == "PATH", "an escaped $${PATH} was reported: %s", f)
	}
}

func TestCheckWithoutVariables(t *testing.T) {
	f := substitute.File{Path: "cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: ${v}\n")}
	got := substitute.Check([]substitute.File{f}, substitute.Available{})
	require.Len(t, got, 1, "Check with no variables: want one hint")
	assert.Equal(t, substitute.SeverityHint, got[0].Severity)

	got = substitute.Check([]substitute.File{f}, substitute.Available{Always: true})
	require.Len(t, got, 1, "Check with substituteStrategy Always: want one error")
	assert.Equal(t, substitute.SeverityError, got[0].Severity)

	got = substitute.Check([]substitute.File{f}, substitute.Available{Names: []string{"v"}})
	assert.Empty(t, got, "Check with v provided, value unknown: want no finding")
}

// Documents a caller decoded give what Check gives for the file, and a
// value repeated in several objects is reported at each of them, though it
// is retyped only once.
func TestCheckDocs(t *testing.T) {
	deploy := readFile(t, "testdata/check/deploy.yaml")
	twice := substitute.File{Path: "twice.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  v: ${version}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: x}\ndata:\n  v: ${version}\n")}
	avail := substitute.Available{Values: map[string]string{"cluster_name": "prod-1", "version": "1.10", "feature": "on"}}
	want := substitute.Check([]substitute.File{deploy, twice}, avail)

	var docs []substitute.Doc
	for _, f := range []substitute.File{deploy, twice} {
		dec := yaml.NewDecoder(bytes.NewReader(f.Data))
		for {
			n := new(yaml.Node)
			if err := dec.Decode(n); err != nil {
				require.ErrorIs(t, err, io.EOF)
				break
			}
			docs = append(docs, substitute.Doc{Path: f.Path, Node: n})
		}
	}
	assert.Equal(t, want, substitute.CheckDocs(docs, avail))

	// The uses of a document stand for it, in any mix with documents.
	for i := range docs {
		mixed := slices.Clone(docs)
		for j := i; j < len(mixed); j += 2 {
			mixed[j].Uses, mixed[j].Node = substitute.FindUses(mixed[j].Node), nil
		}
		assert.Equal(t, want, substitute.CheckDocs(mixed, avail), "documents from %d on, every other one, as their uses", i)
	}

	// A document kustomize built: every finding at the line given.
	built := substitute.CheckDocs([]substitute.Doc{{Path: "built.yaml", Node: docs[len(docs)-1].Node, Line: 42}}, avail)
	require.NotEmpty(t, built)
	for _, f := range built {
		assert.Equal(t, 42, f.Line, "%s", f)
	}

	var retyped []string
	for _, f := range want {
		if f.File == "twice.yaml" {
			retyped = append(retyped, fmt.Sprintf("%d %s %s", f.Line, f.Object, f.Severity))
		}
	}
	assert.Equal(t, []string{"5 ConfigMap/a warning", "11 ConfigMap/x/b warning"}, retyped)

	// Uses keep copies of their scalars, not the document: what becomes of
	// the document after (its nodes reused, or let go) does not change them.
	uses := make([]substitute.Doc, len(docs))
	for i, d := range docs {
		uses[i] = substitute.Doc{Path: d.Path, Uses: substitute.FindUses(d.Node)}
		walk(d.Node, func(n *yaml.Node) { n.Value, n.Line = "plain", 1 })
	}
	assert.Equal(t, want, substitute.CheckDocs(uses, avail), "uses of documents since changed")
}

func walk(n *yaml.Node, fn func(*yaml.Node)) {
	fn(n)
	for _, c := range n.Content {
		walk(c, fn)
	}
}

// TestUsesVars lists the variables a document's uses reference: with or
// without a default, in keys and values, not escaped ones, not in an
// object with substitution disabled.
func TestUsesVars(t *testing.T) {
	var doc, off yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: ${cluster_name}-${region:=eu}\n  ${key}: x\n  b: $${escaped}\n  c: $bare\n  d: ${bad-name}\n  e: |\n    echo ${cluster_name}\n"), &doc))
	require.NoError(t, yaml.Unmarshal([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  a: ${off}\n"), &off))
	assert.Equal(t, []string{"cluster_name", "key", "region"}, substitute.FindUses(&doc).Vars(), "Vars of a document")
	assert.Empty(t, substitute.FindUses(&off).Vars(), "Vars of an object with substitution disabled")
}
