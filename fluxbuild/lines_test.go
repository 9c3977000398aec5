package fluxbuild

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// threeDocs is a file of three documents whose names share a stem
// (app, app-web) and repeat in other namespaces (app in a and b), as a
// file of one ExternalSecret per namespace does. want gives each object's
// line: the first line of its document's content.
const threeDocs = `# objects of the app
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: a
data:
  cluster: ${cluster_name}
---
# the web part

apiVersion: v1
kind: ConfigMap
metadata:
  name: app-web
  namespace: a
data:
  script: |
    echo one
    echo ${cluster_name}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: b
data:
  region: ${region}
  cluster: ${cluster_name}
`

// TestObjectLines checks the line of every object of a three-document
// file, read plain and built by kustomize in the ways that find lines
// differently (the order of the files, origin annotations), and, for a
// built object, the lines of its ${var} uses: where the file has them.
func TestObjectLines(t *testing.T) {
	objects := map[string]int{"ConfigMap/a/app": 2, "ConfigMap/a/app-web": 12, "ConfigMap/b/app": 22}
	// The ${var} uses, by object: value → line.
	uses := map[string]map[string]int{
		"ConfigMap/a/app":     {"${cluster_name}": 8},
		"ConfigMap/a/app-web": {"echo one\necho ${cluster_name}\n": 18},
		"ConfigMap/b/app":     {"${region}": 28, "${cluster_name}": 29},
	}
	patch := "patches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: app\n      namespace: b\n    data:\n      added: ${added}\n"
	// An anchor makes the file one the reader decodes document by
	// document (it may inflate), lines unchanged.
	anchored := strings.Replace(threeDocs, "data:\n  cluster: ${cluster_name}\n---\n# the web", "data: &d\n  cluster: ${cluster_name}\n---\n# the web", 1)
	require.NotEqual(t, threeDocs, anchored)
	for _, tt := range []struct {
		name, kustomization string
		file                string // m.yaml, threeDocs when empty
		prefix              string
		built               bool
		// patched: a use the build wrote, at its object's line.
		patched map[string]int
	}{
		{name: "plain directory"},
		{name: "plain directory, a document at a time", file: anchored},
		{name: "kustomization, a document at a time", file: anchored, kustomization: "resources: [m.yaml]\ncommonAnnotations: {team: a}\n", built: true},
		{name: "kustomization, by the order", kustomization: "resources: [m.yaml]\n", built: true},
		{name: "name prefix, by the order", kustomization: "resources: [m.yaml]\nnamePrefix: p-\n", prefix: "p-", built: true},
		{name: "patch, by origin annotations", kustomization: "resources: [m.yaml]\n" + patch, built: true, patched: map[string]int{"${added}": 22}},
		{name: "prefix and patch, by origin annotations", kustomization: "resources: [m.yaml]\nnamePrefix: p-\n" + patch, prefix: "p-", built: true, patched: map[string]int{"${added}": 22}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "layer")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			file := tt.file
			if file == "" {
				file = threeDocs
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(file), 0o644))
			if tt.kustomization != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(tt.kustomization), 0o644))
			}
			objs, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "layer"}})
			require.NoError(t, err)
			require.Len(t, objs, len(objects))
			for _, o := range objs {
				id := strings.Replace(o.String(), "/"+tt.prefix, "/", 1)
				assert.Equal(t, "layer/m.yaml", o.File, "Build(%s): %s's file", tt.name, o)
				assert.Equal(t, objects[id], o.Line, "Build(%s): %s's line", tt.name, o)
				assert.Equal(t, tt.built, o.Built, "Build(%s): %s built", tt.name, o)
				assert.Equal(t, tt.built, o.ScalarLines, "Build(%s): %s's ${var} uses at the file's lines", tt.name, o)
				want := map[string]int{}
				for v, l := range uses[id] {
					want[v] = l
				}
				if id == "ConfigMap/b/app" {
					for v, l := range tt.patched {
						want[v] = l
					}
				}
				assert.Equal(t, want, dollarLines(o.Node), "Build(%s): the lines of %s's ${var} uses", tt.name, o)
			}
		})
	}
}

// TestGeneratedObjectLine checks that an object a generator makes is
// at the generator's entry in the kustomization file, not at its folder.
func TestGeneratedObjectLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "layer")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files := map[string]string{
		"kustomization.yaml": "configMapGenerator:\n- name: other\n  literals: [a=b]\n- name: dash\n  namespace: mon\n  files:\n  - d.json\n",
		"d.json":             `{"a": "${DS_PROM}"}`,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	objs, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "layer"}})
	require.NoError(t, err)
	var got []string
	for _, o := range objs {
		got = append(got, fmt.Sprintf("%s %s:%d %v", o.Kind+"/"+strings.SplitN(o.Name, "-", 2)[0], o.File, o.Line, o.ScalarLines))
	}
	assert.ElementsMatch(t, []string{
		"ConfigMap/other layer/kustomization.yaml:2 false",
		`ConfigMap/dash layer/kustomization.yaml:4 false`,
	}, got, "Build of a configMapGenerator: each object at its entry")
}

// dollarLines maps the values of n's scalars that hold a $ to their lines.
func dollarLines(n *yaml.Node) map[string]int {
	out := map[string]int{}
	walkScalars(n, func(s *yaml.Node) {
		if strings.Contains(s.Value, "$") {
			out[s.Value] = s.Line
		}
	})
	return out
}

// TestKustomizeWarningsGoToTheLog checks that kustomize's warning about a
// deprecated field (patchesStrategicMerge) reaches the build's logger at
// debug level, naming the kustomization, and not os.Stderr.
func TestKustomizeWarningsGoToTheLog(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "layer")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "base"), 0o755))
	files := map[string]string{
		"kustomization.yaml":      "resources: [base]\n",
		"base/kustomization.yaml": "resources: [m.yaml]\npatchesStrategicMerge:\n- p.yaml\n",
		"base/m.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: b\n",
		"base/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: c\n",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644))
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	var objs []*Object
	var err error
	printed := stderrOf(t, func() {
		objs, err = Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "layer"}}, WithLogger(log))
	})
	require.NoError(t, err)
	require.Len(t, objs, 1)
	assert.Equal(t, "c", yamlutil.Str(objs[0].Node, "data", "a"), "the patch applies")
	assert.Empty(t, printed, "Build printed to stderr")
	assert.Contains(t, logged.String(), `level=DEBUG msg="kustomize: Warning: 'patchesStrategicMerge' is deprecated.`, "the debug log")
	assert.Contains(t, logged.String(), "kustomization=layer/base/kustomization.yaml", "the debug log names the kustomization")
}

// stderrOf runs fn with os.Stderr sent to a pipe and returns what fn
// printed there.
func stderrOf(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	func() {
		defer func() { os.Stderr = saved }()
		fn()
	}()
	require.NoError(t, w.Close())
	out := <-done
	require.NoError(t, r.Close())
	return string(out)
}
