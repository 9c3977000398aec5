package review

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func obj(t *testing.T, producer, y string) Object {
	t.Helper()
	objs, err := ParseObjects(producer, []byte(y))
	if err != nil || len(objs) != 1 {
		t.Fatalf("ParseObjects: %v (%d objects)", err, len(objs))
	}
	return objs[0]
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
  labels:
    helm.sh/chart: web-1.0.0
spec:
  template:
    metadata:
      annotations:
        checksum/config: aaa
    spec:
      containers:
        - name: web
          image: nginx:1.27
          env:
            - {name: A, value: "1"}
            - {name: B, value: "2"}
        - name: sidecar
          image: busybox:1
`

func TestDiffObjectsMatchesListEntriesByName(t *testing.T) {
	base := obj(t, "Kustomization/flux-system/apps", deploy)
	// Containers and env reordered, one value changed, the chart label and
	// checksum bumped: one move per list and one value, no noise.
	head := obj(t, "Kustomization/flux-system/apps", strings.NewReplacer(
		"web-1.0.0", "web-1.1.0", "checksum/config: aaa", "checksum/config: bbb",
	).Replace(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
  labels:
    helm.sh/chart: web-1.0.0
spec:
  template:
    metadata:
      annotations:
        checksum/config: aaa
    spec:
      containers:
        - name: sidecar
          image: busybox:1
        - name: web
          image: nginx:1.27
          env:
            - {name: B, value: "2"}
            - {name: A, value: "3"}
`))
	got := DiffObjects([]Object{base}, []Object{head}, DefaultStripAttrs)
	if len(got) != 1 || got[0].Action != Changed {
		t.Fatalf("DiffObjects = %+v, want one change", got)
	}
	want := []FieldChange{
		{Path: "spec.template.spec.containers", Op: FieldMoved, Before: []string{"web", "sidecar"}, After: []string{"sidecar", "web"}},
		{Path: "spec.template.spec.containers[name=web].env", Op: FieldMoved, Before: []string{"A", "B"}, After: []string{"B", "A"}},
		{Path: "spec.template.spec.containers[name=web].env[name=A].value", Op: FieldChanged, Before: "1", After: "3"},
	}
	if d := cmp.Diff(want, got[0].Fields); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	// Without stripping, the chart label and checksum are changes.
	if got := DiffObjects([]Object{base}, []Object{head}, nil); len(got[0].Fields) != 5 {
		t.Errorf("unstripped: %d fields, want 5: %+v", len(got[0].Fields), got[0].Fields)
	}
}

func TestDiffObjectsHidesSecretValues(t *testing.T) {
	secret := func(v string) Object {
		return obj(t, "Kustomization/flux-system/apps", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: apps}\nstringData:\n  token: "+v+"\n  same: keep-me-hidden\n")
	}
	for _, tc := range []struct {
		name       string
		base, head []Object
	}{
		{"changed", []Object{secret("old-secret-value")}, []Object{secret("new-secret-value")}},
		{"added", nil, []Object{secret("new-secret-value")}},
		{"removed", []Object{secret("old-secret-value")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DiffObjects(tc.base, tc.head, nil)
			if len(got) != 1 || !got[0].Secret {
				t.Fatalf("DiffObjects = %+v, want one Secret change", got)
			}
			var all strings.Builder
			all.WriteString(got[0].Before + got[0].After + got[0].Unified())
			for _, f := range got[0].Fields {
				if !f.Hidden || f.Before != nil || f.After != nil {
					t.Errorf("field %s not hidden: %+v", f.Path, f)
				}
			}
			r := &Report{Objects: got}
			_ = r.WriteText(&all, TextOptions{})
			_ = WriteMarkdown(&all, []*Report{r}, MarkdownOptions{})
			for _, v := range []string{"old-secret-value", "new-secret-value", "keep-me-hidden"} {
				if strings.Contains(all.String(), v) {
					t.Errorf("a Secret value reached the report: %q in\n%s", v, all.String())
				}
			}
		})
	}
}

func TestDiffObjectsAddedRemovedAndMoved(t *testing.T) {
	cm := func(producer, name string) Object {
		return obj(t, producer, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: apps}\ndata: {a: b}\n")
	}
	got := DiffObjects(
		[]Object{cm("Kustomization/flux-system/a", "gone"), cm("Kustomization/flux-system/a", "moved")},
		[]Object{cm("Kustomization/flux-system/b", "moved"), cm("Kustomization/flux-system/a", "new")}, nil)
	var lines []string
	for _, c := range got {
		lines = append(lines, string(c.Action)+" "+c.ID.String()+" "+producerNote(c))
	}
	want := []string{
		"removed ConfigMap/apps/gone Kustomization/flux-system/a",
		"changed ConfigMap/apps/moved Kustomization/flux-system/a -> Kustomization/flux-system/b",
		"added ConfigMap/apps/new Kustomization/flux-system/a",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestUnkeyedListsDiffByIndex(t *testing.T) {
	a := obj(t, "p", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nargs: [a, b]\n")
	b := obj(t, "p", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nargs: [a, c, d]\n")
	got := DiffObjects([]Object{a}, []Object{b}, nil)
	want := []FieldChange{
		{Path: "args[1]", Op: FieldChanged, Before: "b", After: "c"},
		{Path: "args[2]", Op: FieldAdded, After: "d"},
	}
	if d := cmp.Diff(want, got[0].Fields); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// Entries inserted in a list without a key (a chart's mounts, keyed by
// path, which no Kubernetes list uses) are that many additions, matched
// by content, not a change of every entry after them; an entry changed
// in place is one change.
func TestUnkeyedListsMatchByContent(t *testing.T) {
	mounts := func(paths ...string) string {
		var b strings.Builder
		for _, p := range paths {
			b.WriteString("    - {path: " + p + ", readOnly: true}\n")
		}
		return b.String()
	}
	doc := func(list string) Object {
		return obj(t, "p", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nspec:\n  globalMounts:\n"+list)
	}
	added := func(i int, p string) FieldChange {
		return FieldChange{Path: fmt.Sprintf("spec.globalMounts[%d]", i), Op: FieldAdded, After: map[string]any{"path": p, "readOnly": true}}
	}
	for _, tc := range []struct {
		name       string
		base, head string
		want       []FieldChange
	}{
		{"four inserted", mounts("/a", "/b", "/c", "/d", "/e", "/f"), mounts("/a", "/w", "/x", "/y", "/z", "/b", "/c", "/d", "/e", "/f"),
			[]FieldChange{added(1, "/w"), added(2, "/x"), added(3, "/y"), added(4, "/z")}},
		{"inserted before a changed entry", mounts("/a", "/b"),
			"    - {path: /new, readOnly: true}\n    - {path: /a, readOnly: false}\n" + mounts("/b"),
			[]FieldChange{added(0, "/new"), {Path: "spec.globalMounts[1].readOnly", Op: FieldChanged, Before: true, After: false}}},
		{"removed from the middle", mounts("/a", "/b", "/c"), mounts("/a", "/c"),
			[]FieldChange{{Path: "spec.globalMounts[1]", Op: FieldRemoved, Before: map[string]any{"path": "/b", "readOnly": true}}}},
		{"replaced", mounts("/a", "/b", "/c"), "    - {path: /a, readOnly: true}\n    - {name: other}\n" + mounts("/c"),
			[]FieldChange{{Path: "spec.globalMounts[1].name", Op: FieldAdded, After: "other"},
				{Path: "spec.globalMounts[1].path", Op: FieldRemoved, Before: "/b"},
				{Path: "spec.globalMounts[1].readOnly", Op: FieldRemoved, Before: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DiffObjects([]Object{doc(tc.base)}, []Object{doc(tc.head)}, nil)
			if len(got) != 1 {
				t.Fatalf("DiffObjects = %+v, want one change", got)
			}
			if d := cmp.Diff(tc.want, got[0].Fields); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
		})
	}
}

func TestLCS(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"", ""}, {"abc", ""}, {"", "abc"}, {"abc", "abc"}, {"abcdef", "axbycz"}, {"xyz", "abc"}, {"aaa", "aa"}, {"abcbdab", "bdcaba"},
	} {
		got := lcs(len(tc.a), len(tc.b), func(i, j int) bool { return tc.a[i] == tc.b[j] })
		var common []byte
		li, lj := -1, -1
		for _, m := range got {
			if m[0] <= li || m[1] <= lj || tc.a[m[0]] != tc.b[m[1]] {
				t.Fatalf("lcs(%q, %q) = %v: not a common subsequence", tc.a, tc.b, got)
			}
			li, lj = m[0], m[1]
			common = append(common, tc.a[m[0]])
		}
		if want := lcsLen(tc.a, tc.b); len(common) != want {
			t.Errorf("lcs(%q, %q) = %q, want length %d", tc.a, tc.b, common, want)
		}
	}
}

// lcsLen is the LCS length by the textbook recursion, to check lcs with.
func lcsLen(a, b string) int {
	if a == "" || b == "" {
		return 0
	}
	if a[0] == b[0] {
		return 1 + lcsLen(a[1:], b[1:])
	}
	return max(lcsLen(a[1:], b), lcsLen(a, b[1:]))
}

// A multi-line string changed past its first 120 characters: text shows
// the lines that changed, and markdown's summary line names the field.
func TestMultiLineStringsAsLineDiffs(t *testing.T) {
	values := func(level string) string {
		return "    replicaCount: 1\n    resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}\n    podAnnotations: {example.com/team: platform}\n    logLevel: " + level + "\n"
	}
	cm := func(level string) Object {
		return obj(t, "Kustomization/flux-system/apps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: values, namespace: apps}\ndata:\n  values.yaml: |\n"+values(level))
	}
	got := DiffObjects([]Object{cm("info")}, []Object{cm("debug")}, nil)
	require.Len(t, got, 1)
	r := &Report{Objects: got}
	var text, md strings.Builder
	require.NoError(t, r.WriteText(&text, TextOptions{}))
	assert.Contains(t, text.String(), `    data["values.yaml"]:
      @@ -2,3 +2,3 @@
       resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
       podAnnotations: {example.com/team: platform}
      -logLevel: info
      +logLevel: debug
`)
	require.NoError(t, WriteMarkdown(&md, []*Report{r}, MarkdownOptions{}))
	assert.Contains(t, md.String(), `<summary>~ <code>ConfigMap/apps/values</code> (Kustomization/flux-system/apps): <code>data["values.yaml"]: +1 -1 lines</code></summary>`)
}

// Markdown's collapsed section names the first changed field, and how
// many more there are, escaped for HTML.
func TestMarkdownSummaryNamesTheFirstField(t *testing.T) {
	base := obj(t, "Kustomization/flux-system/apps", deploy)
	head := obj(t, "Kustomization/flux-system/apps", strings.NewReplacer("nginx:1.27", "nginx:<1.28>", "busybox:1", "busybox:2").Replace(deploy))
	r := &Report{Objects: DiffObjects([]Object{base}, []Object{head}, DefaultStripAttrs)}
	var md strings.Builder
	require.NoError(t, WriteMarkdown(&md, []*Report{r}, MarkdownOptions{}))
	assert.Contains(t, md.String(), "<summary>~ <code>Deployment.apps/apps/web</code> (Kustomization/flux-system/apps): "+
		"<code>spec.template.spec.containers[name=web].image: nginx:1.27 -&gt; nginx:&lt;1.28&gt;</code> and 1 more</summary>")
}

// A stack's HelmReleases are never rendered: their images are their
// values'.
func TestStackImagesFromValues(t *testing.T) {
	hr := func(tag string) Object {
		return obj(t, "Stack/platform", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app, namespace: apps}\nspec:\n  values:\n    image: {repository: ghcr.io/x/app, tag: \""+tag+"\"}\n")
	}
	got := stackImages([]Object{hr("1.0")}, []Object{hr("1.1")})
	want := []ImageChange{{Image: "ghcr.io/x/app", Op: "retagged", Before: []string{"ghcr.io/x/app:1.0"}, After: []string{"ghcr.io/x/app:1.1"},
		Objects: []string{"HelmRelease.helm.toolkit.fluxcd.io/apps/app"}, FromValues: true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestImageRepository(t *testing.T) {
	for in, want := range map[string]string{
		"nginx:1.27":                        "nginx",
		"localhost:5000/app:v1":             "localhost:5000/app",
		"localhost:5000/app":                "localhost:5000/app",
		"ghcr.io/x/y@sha256:abc":            "ghcr.io/x/y",
		"ghcr.io/x/y:1.0@sha256:abc":        "ghcr.io/x/y",
		"registry.example.com:443/team/app": "registry.example.com:443/team/app",
	} {
		if got := imageRepository(in); got != want {
			t.Errorf("imageRepository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFolderObjects(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"apps/web.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: apps}\n---\nnot: an object\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: apps}\n",
		"apps/kustomization.yaml": "resources: [web.yaml]\n",
		"apps/values.yml":         "replicaCount: 2\n",
		"README.md":               "kind: ConfigMap\n",
		"ignored/x.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := FolderObjects(dir, func(rel string) bool { return strings.HasPrefix(rel, "ignored/") })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Producer+" "+o.ID.String())
	}
	want := []string{"apps/web.yaml ConfigMap/apps/web", "apps/web.yaml Service/apps/web"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestGeneratedRenameIsOneChange(t *testing.T) {
	const producer = "Kustomization/flux-system/apps"
	cm := func(name, values string) Object {
		return obj(t, producer, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: apps}\ndata: {values.yaml: \""+values+"\"}\n")
	}
	hr := func(valuesName string) Object {
		return obj(t, producer, "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: apps}\n"+
			"spec:\n  valuesFrom:\n    - {kind: ConfigMap, name: "+valuesName+"}\n    - {kind: Secret, name: web-secret}\n")
	}
	lines := func(cs []ObjectChange) []string {
		var out []string
		for _, c := range cs {
			out = append(out, string(c.Action)+" "+c.title())
			for _, f := range c.Fields {
				out = append(out, fmt.Sprintf("  %s %s %v -> %v", f.Path, f.Op, f.Before, f.After))
			}
		}
		return out
	}
	tests := []struct {
		name       string
		base, head []Object
		want       []string
	}{{
		name: "a generator's new hash is its content's change",
		base: []Object{cm("web-values-2k8mh6tgd4", "replicas: 1"), hr("web-values-2k8mh6tgd4")},
		head: []Object{cm("web-values-5fbk9c7h2m", "replicas: 2"), hr("web-values-5fbk9c7h2m")},
		want: []string{
			"changed ConfigMap/apps/web-values-5fbk9c7h2m (was web-values-2k8mh6tgd4)",
			`  data["values.yaml"] changed replicas: 1 -> replicas: 2`,
			"  metadata.name changed web-values-2k8mh6tgd4 -> web-values-5fbk9c7h2m",
			"changed HelmRelease.helm.toolkit.fluxcd.io/apps/web",
			"  spec.valuesFrom[name=web-values-5fbk9c7h2m].name changed web-values-2k8mh6tgd4 -> web-values-5fbk9c7h2m",
		},
	}, {
		name: "names without a generator's hash are other objects",
		base: []Object{cm("web-values-aaaaaaaaaa", "replicas: 1")},
		head: []Object{cm("web-values-bbbbbbbbbb", "replicas: 1")},
		want: []string{"removed ConfigMap/apps/web-values-aaaaaaaaaa", "added ConfigMap/apps/web-values-bbbbbbbbbb"},
	}, {
		name: "two on one stem are not guessed at",
		base: []Object{cm("web-values-2k8mh6tgd4", "a: 1")},
		head: []Object{cm("web-values-5fbk9c7h2m", "a: 2"), cm("web-values-9dh5cg8b7k", "a: 3")},
		want: []string{"removed ConfigMap/apps/web-values-2k8mh6tgd4", "added ConfigMap/apps/web-values-5fbk9c7h2m", "added ConfigMap/apps/web-values-9dh5cg8b7k"},
	}, {
		name: "a generator kept by both sides stays unmatched with another",
		base: []Object{cm("web-values-2k8mh6tgd4", "a: 1")},
		head: []Object{cm("web-values-2k8mh6tgd4", "a: 1"), cm("web-values-5fbk9c7h2m", "a: 2")},
		want: []string{"added ConfigMap/apps/web-values-5fbk9c7h2m"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, lines(DiffObjects(tt.base, tt.head, nil))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
