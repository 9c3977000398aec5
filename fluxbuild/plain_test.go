package fluxbuild

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// result is what one reader made of a directory: the objects
// (apiVersion, kind, namespace/name), sorted, or an error.
type result struct {
	ids []string
	err error
}

func idsOf(objs []*Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.APIVersion+" "+o.Kind+" "+o.Namespace+"/"+o.Name)
	}
	slices.Sort(out)
	return out
}

// readAll reads a directory without a kustomization file three ways: the
// fast path, fluxpack's kustomize path, and Flux itself (its generator,
// its kustomize build and the YAML it applies), each object of Flux's
// output then read as fluxpack reads objects (which refuses a few that
// Flux builds but cannot apply, such as one without apiVersion).
func readAll(t *testing.T, files map[string]string) (fast, built, flux result) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "layer")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "layer"}}
	objs, err := Build(t.Context(), Source{Dir: root}, ks)
	fast = result{idsOf(objs), err}
	if g, err := generate(root, dir, ks, Source{}, false, nil, nil); err != nil {
		built.err = err
	} else {
		require.True(t, g.plain, "the fixture must take the fast path")
		_, objs, err := g.kustomize()
		built = result{idsOf(objs), err}
	}
	for _, body := range files {
		if err := yamlutil.Check([]byte(body)); err != nil {
			// Flux's kustomize would expand the alias until the stack
			// overflows, taking the test with it; both readers must refuse.
			flux.err = err
			return fast, built, flux
		}
	}
	flux.ids, flux.err = fluxRead(t, dir)
	return fast, built, flux
}

func fluxRead(t *testing.T, dir string) ([]string, error) {
	work := filepath.Join(t.TempDir(), "work")
	require.NoError(t, os.CopyFS(work, os.DirFS(dir)))
	ks := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "layer", "namespace": "flux-system"},
		"spec":     map[string]any{"path": "./", "prune": true},
	}}
	if _, err := fluxkustomize.NewGenerator("", ks).WriteFile(work); err != nil {
		return nil, err
	}
	m, err := fluxkustomize.Build(filesys.MakeFsOnDisk(), work)
	if err != nil {
		return nil, err
	}
	if _, err := m.AsYaml(); err != nil {
		return nil, err
	}
	var objs []*Object
	for _, r := range m.Resources() {
		o, err := newObject(r.YNode())
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return idsOf(objs), nil
}

// A directory without a kustomization file is read without kustomize; the
// objects must be the ones Flux builds from the kustomization.yaml it
// generates, and a directory Flux refuses must be refused; the same holds
// for fluxpack's kustomize path.
func TestPlainMatchesKustomize(t *testing.T) {
	for name, files := range plainCases() {
		t.Run(name, func(t *testing.T) {
			comparePlain(t, files)
		})
	}
}

// FuzzPlainMatchesKustomize feeds two manifest files to the three readers.
func FuzzPlainMatchesKustomize(f *testing.F) {
	for _, files := range plainCases() {
		f.Add(files["a.yaml"], files["b.yaml"])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		comparePlain(t, map[string]string{"a.yaml": a, "b.yaml": b})
	})
}

func comparePlain(t *testing.T, files map[string]string) {
	t.Helper()
	fast, built, flux := readAll(t, files)
	for _, r := range []struct {
		name string
		result
	}{{"the fast path", fast}, {"the kustomize path", built}} {
		if flux.err != nil {
			assert.Error(t, r.err, "Flux refuses the directory (%v), %s must too; it read %q", flux.err, r.name, r.ids)
			continue
		}
		if assert.NoError(t, r.err, "Flux builds the directory into %q; %s must too", flux.ids, r.name) {
			assert.Equal(t, flux.ids, r.ids, "%s", r.name)
		}
	}
}

func plainCases() map[string]map[string]string {
	cm := func(name, ns string) string {
		s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
		if ns != "" {
			s += "  namespace: " + ns + "\n"
		}
		return s
	}
	return map[string]map[string]string{
		"documents":                 {"a.yaml": cm("a", "x") + "---\n" + cm("b", "") + "---\n", "b.yml": "# only a comment\n---\n" + cm("c", "y")},
		"empty-documents":           {"a.yaml": "---\n---\n" + cm("a", "") + "---\n# nothing\n---\nnull\n"},
		"nested":                    {"a.yaml": cm("a", ""), "sub/b.yaml": cm("b", "")},
		"list":                      {"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + indent(cm("a", "x")) + "- " + indent(cm("b", "x"))},
		"typed-list":                {"l.yaml": "apiVersion: v1\nkind: ConfigMapList\nitems:\n- " + indent(cm("a", "x"))},
		"list-in-list":              {"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - " + indent(indent(cm("a", "x")))},
		"list-null":                 {"l.yaml": "apiVersion: v1\nkind: List\nitems: null\n", "a.yaml": cm("a", "")},
		"list-no-items":             {"l.yaml": "apiVersion: v1\nkind: List\nmetadata: {name: l}\n"},
		"same-name-other-namespace": {"a.yaml": cm("a", "x"), "b.yaml": cm("a", "y")},
		"same-name-other-kind":      {"a.yaml": cm("a", "x"), "b.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: a, namespace: x}\n"},
		"duplicate":                 {"a.yaml": cm("a", "x"), "b.yaml": cm("a", "x")},
		"duplicate-in-a-file":       {"a.yaml": cm("a", "x") + "---\n" + cm("a", "x")},
		"duplicate-default":         {"a.yaml": cm("a", "default"), "b.yaml": cm("a", "")},
		"duplicate-in-list":         {"a.yaml": cm("a", "x"), "l.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + indent(cm("a", "x"))},
		"other-group-version":       {"a.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: a}\n", "b.yaml": "apiVersion: example.com/v2\nkind: Thing\nmetadata: {name: a}\n"},
		"generate-name":             {"a.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: j-}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {generateName: j-}\n"},
		"cluster-scoped":            {"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", "b.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a}\n"},
		"bad-separator":             {"a.yaml": cm("a", "") + "--- # fine\n" + cm("b", "") + "---: x\n"},
		"separator-comment":         {"a.yaml": cm("a", "") + "---#x\n" + cm("b", "")},
		"document-end":              {"a.yaml": cm("a", "") + "...\n" + cm("b", "")},
		"first-line-separator":      {"a.yaml": "---\n" + cm("a", "") + "---\n---\n" + cm("b", "")},
		"crlf":                      {"a.yaml": "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\n" + cm("b", "")},
		"duplicate-key":             {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1', x: '2'}\n"},
		"empty-map":                 {"a.yaml": "{}\n---\n" + cm("a", "")},
		"anchors":                   {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a, namespace: x}\ndata: {n: *m}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: *m\n  name: b\n"},
		"resource-list":             {"a.yaml": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + indent(cm("a", "x")) + "- null\n- {}\n"},
		"function-config":           {"a.yaml": "apiVersion: v1\nkind: List\nfunctionConfig: {a: b}\n"},
		"list-items":                {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\nitems:\n- null\n- {}\n- []\n- " + indent(cm("a", "x"))},
		"list-scalar-item":          {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\nitems: [x]\n"},
		"list-items-map":            {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\nitems: {a: b}\n"},
		"lone-list-items-map":       {"a.yaml": "apiVersion: v1\nkind: List\nitems: {a: b}\n"},
		"list-without-name":         {"a.yaml": "apiVersion: v1\nkind: FooList\n"},
		"local-config": {
			"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {config.kubernetes.io/local-config: 'true'}}\n",
			"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {config.kubernetes.io/local-config: 'false'}}\n",
			"c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {config.kubernetes.io/local-config: ''}}\n---\n" +
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, annotations: {config.kubernetes.io/local-config: null}}\n",
		},
		"local-config-no-api-version": { // kustomize drops it before anything asks for more
			"a.yaml": "kind: ConfigMap\nmetadata: {name: a, annotations: {config.kubernetes.io/local-config: 'true'}}\ndata: {x: .nan, x: 1}\n",
			"b.yaml": cm("b", ""),
		},
		"local-config-duplicate": {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {config.kubernetes.io/local-config: 'true'}}\n", "b.yaml": cm("a", "")},
		"nan":                    {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: .nan}\n"},
		"infinity":               {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {x: -.inf}\n"},
		"complex-key":            {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {? {a: b} : c}\n"},
		"int-key":                {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {1: c, true: d, null: e}\n"},
		"binary":                 {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {x: !!binary aGVsbG8=}\n"},
		"timestamp":              {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {x: 2001-12-14t21:59:43.10-05:00}\n"},
		"tagged":                 {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: !!str 123, y: !!int '7'}\n", "b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: !!int abc}\n"},
		"big-numbers":            {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nspec: {x: 99999999999999999999, y: 0x1F, z: 1e400, w: 0o17}\n"},
		"list-nan-item":          {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {x: .nan}}\n"},
		"list-odd-fields":        {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\nmetadata: {1: x}\nextra: .nan\nitems:\n- " + indent(cm("a", ""))},
		"list-int-key":           {"a.yaml": cm("z", "") + "---\napiVersion: v1\nkind: List\n7: x\nitems:\n- " + indent(cm("a", ""))},
		"alias-cycle":            {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a, labels: {x: *m}}\n"},
		"no-kind":                {"a.yaml": "apiVersion: v1\nmetadata: {name: a}\n"},
		"no-name":                {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"},
		"scalar":                 {"a.yaml": "just a string\n"},
		"invalid-yaml":           {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n"},
	}
}

func indent(s string) string {
	out := ""
	for i, line := range splitLines(s) {
		if i > 0 {
			out += "  "
		}
		out += line + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// generate lists what Flux's generator lists as resources of a directory
// without a kustomization file, and finds a kustomization file as
// kustomize does (a symbolic link to a file counts, a directory does not).
func TestGenerateMatchesFlux(t *testing.T) {
	root := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	files := map[string]string{
		"b.yaml": cm, "a.yml": cm, "notes.txt": "x", "z.json": "{}",
		"sub/c.yaml": cm, "sub/deeper/d.yaml": cm,
		"kust/kustomization.yaml": "resources: [e.yaml]\n", "kust/e.yaml": cm,
		"kustomization.yaml/f.yaml": cm, // a directory with a kustomization's name
		"linked/target.txt":         "resources: [g.yaml]\n", "linked/g.yaml": cm,
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	require.NoError(t, os.Symlink("target.txt", filepath.Join(root, "linked", "Kustomization")))

	g, err := generate(root, root, &kustomizev1.Kustomization{}, Source{}, false, nil, nil)
	require.NoError(t, err)
	assert.False(t, g.found)
	assert.False(t, g.plain, "a subdirectory has its own kustomization")
	got := g.kus.Resources

	ks := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "layer", "namespace": "flux-system"},
	}}
	manifest, _, _, err := fluxkustomize.NewGenerator("", ks).GenerateManifest(root)
	require.NoError(t, err)
	var k struct {
		Resources []string `json:"resources"`
	}
	require.NoError(t, sigyaml.Unmarshal(manifest, &k))
	assert.Equal(t, k.Resources, got)

	g, err = generate(root, filepath.Join(root, "linked"), &kustomizev1.Kustomization{}, Source{}, false, nil, nil)
	require.NoError(t, err)
	assert.True(t, g.found)
	assert.Equal(t, filepath.Join(root, "linked", "Kustomization"), g.kfile, "a symbolic link to a file is a kustomization file")
}
