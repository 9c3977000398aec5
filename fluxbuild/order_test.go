package fluxbuild

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// kustomize knows the file of every object from the order of the objects
// when the kustomization lists only files and changes objects in place,
// and asks kustomize's origin annotations otherwise: both must give the
// same objects, files, lines and resources, and the same errors.
func TestOrderMatchesOrigins(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, labels: {app: app}}\nspec:\n  selector: {matchLabels: {app: app}}\n" +
		"  template:\n    metadata: {labels: {app: app}}\n    spec:\n      containers: [{name: app, image: nginx:1, envFrom: [{configMapRef: {name: a}}]}]\n"
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec: {group: example.com, names: {kind: Thing, plural: things}, scope: Namespaced}\n"
	tests := []struct {
		name  string
		files map[string]string
		ks    kustomizev1.KustomizationSpec
		order bool // sourceOrder expects to tell the files
		// matches: the build is what the order foretold (else kustomize
		// is asked again, with origins).
		matches bool
	}{
		{"name-prefix", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [a.yaml, ./b.yaml]\n",
			"a.yaml":             cm("a") + "---\n" + cm("ab") + "---\n" + deploy, "b.yaml": cm("b") + "---\n" + crd,
		}, kustomizev1.KustomizationSpec{}, true, true},
		{"in-place fields", map[string]string{
			"kustomization.yaml": "nameSuffix: -s\nnamespace: team\ncommonLabels: {x: y}\nlabels: [{pairs: {l: v}}]\ncommonAnnotations: {a: b}\n" +
				"images: [{name: nginx, newTag: '2'}]\nreplicas: [{name: app, count: 3}]\nresources: [a.yaml, sub/b.yaml]\n",
			"a.yaml": deploy + "---\n" + cm("a"), "sub/b.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n" + cm("b"),
		}, kustomizev1.KustomizationSpec{}, true, true},
		{"lists and local config", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [l.yaml, a.yaml]\n",
			"l.yaml":             "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: y}}\n",
			"a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local, annotations: {config.kubernetes.io/local-config: 'true'}}\n---\n" + cm("a"),
		}, kustomizev1.KustomizationSpec{}, true, true},
		{"generated, with the Kustomization's fields", map[string]string{
			"a.yaml": cm("a") + "---\n" + deploy, "b.yaml": cm("b"),
		}, kustomizev1.KustomizationSpec{TargetNamespace: "t", NamePrefix: "p-", NameSuffix: "-s"}, true, true},
		{"annotations that make everything local", map[string]string{
			"kustomization.yaml": "commonAnnotations: {config.kubernetes.io/local-config: 'true'}\nresources: [a.yaml]\n",
			"a.yaml":             cm("a"),
		}, kustomizev1.KustomizationSpec{}, true, false},
		{"a name kustomize reads as a bool", map[string]string{
			"kustomization.yaml": "namespace: team\nresources: [a.yaml]\n",
			"a.yaml":             "apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n",
		}, kustomizev1.KustomizationSpec{}, true, false},
		{"patches", map[string]string{
			"kustomization.yaml": "resources: [a.yaml]\npatches:\n- patch: |\n    $patch: delete\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n",
			"a.yaml":             cm("a") + "---\n" + cm("b"),
		}, kustomizev1.KustomizationSpec{}, false, false},
		{"a generator", map[string]string{
			"kustomization.yaml": "resources: [a.yaml]\nconfigMapGenerator: [{name: g, literals: [k=v]}]\n",
			"a.yaml":             cm("a"),
		}, kustomizev1.KustomizationSpec{}, false, false},
		{"a directory", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [a.yaml, sub]\n",
			"a.yaml":             cm("a"), "sub/kustomization.yaml": "nameSuffix: -s\nresources: [b.yaml]\n", "sub/b.yaml": cm("b"),
		}, kustomizev1.KustomizationSpec{}, false, false},
		{"a Flux patch", map[string]string{
			"a.yaml": cm("a"),
		}, kustomizev1.KustomizationSpec{TargetNamespace: "t", Patches: []kustomize.Patch{{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"}}}, false, false},
		{"duplicate", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [a.yaml, b.yaml]\n", "a.yaml": cm("a"), "b.yaml": cm("a"),
		}, kustomizev1.KustomizationSpec{}, true, true},
		{"a file listed twice", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [a.yaml, ./a.yaml]\n", "a.yaml": cm("a"),
		}, kustomizev1.KustomizationSpec{}, true, true},
		{"bad YAML", map[string]string{
			"kustomization.yaml": "namePrefix: p-\nresources: [a.yaml]\n", "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n",
		}, kustomizev1.KustomizationSpec{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "layer")
			for _, name := range slices.Sorted(maps.Keys(tt.files)) {
				p := filepath.Join(dir, filepath.FromSlash(name))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(tt.files[name]), 0o644))
			}
			ks := &kustomizev1.Kustomization{Spec: tt.ks}
			ks.Spec.Path = "layer"
			build := func(trackOrigins bool) (bool, []string, []string, error) {
				g, err := generate(root, dir, ks, Source{}, true, nil, nil)
				require.NoError(t, err)
				require.False(t, g.plain, "the fixture must take the kustomize path")
				order := g.sourceOrder(&lineIndex{root: root, files: map[string][]*sourceLine{}})
				ordered := order != nil
				if ordered && !trackOrigins {
					// Whether the build matches the order, or asks again.
					if m, err := g.build(false, false); err == nil {
						assert.Equal(t, tt.matches, fromOrder(m, order, g.kus.NamePrefix, g.kus.NameSuffix) != nil, "the build matches the order")
					}
				}
				g.trackOrigins = trackOrigins
				ress, objs, err := g.kustomize()
				var gotObjs, gotRess []string
				for _, o := range objs {
					node, err := yaml.Marshal(o.Node)
					require.NoError(t, err)
					gotObjs = append(gotObjs, fmt.Sprintf("%s %s %s:%d %s", o, o.APIVersion, o.File, o.Line, node))
				}
				for _, r := range ress {
					y, err := r.AsYAML()
					require.NoError(t, err)
					gotRess = append(gotRess, string(y))
				}
				return ordered, gotObjs, gotRess, err
			}
			ordered, objs, ress, err := build(false)
			_, wantObjs, wantRess, wantErr := build(true)
			assert.Equal(t, tt.order, ordered, "sourceOrder says the order tells")
			if wantErr != nil {
				assert.EqualError(t, err, wantErr.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, wantObjs, objs, "objects")
			assert.Equal(t, wantRess, ress, "resources")
		})
	}
}
