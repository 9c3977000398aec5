package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
