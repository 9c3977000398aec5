package fluxbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Builds that leave kustomize's global state alone run in parallel (they
// share kustomizeMu), as do previews, whose substitution reads the schema
// (is a kind namespaced?); builds that change it (an openapi field: the
// schema is reset around the build; a deprecated field: os.Stderr is
// swapped) run alone. Run with many of each at once, every build and
// preview must give what it gives alone, and the race detector (make test
// runs -race) must see nothing: the strategic merge patches and the
// substitutions read the schema kustomize parses on first use while the
// openapi builds reset it.
func TestConcurrentBuilds(t *testing.T) {
	root := t.TempDir()
	deploy := func(name string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  selector: {matchLabels: {app: %[1]s}}\n"+
			"  template:\n    metadata: {labels: {app: %[1]s}}\n    spec:\n      containers: [{name: app, image: nginx:1, ports: [{containerPort: 80}]}]\n", name)
	}
	thing := "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  items: [{name: a, v: 1}, {name: b, v: 2}]\n"
	schema := `{"definitions": {"com.example.v1.Thing": {"properties": {"spec": {"properties": {"items": {"items": {"type": "object"}, "type": "array",
 "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}, "type": "object"}}, "type": "object",
 "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Thing", "version": "v1"}]}}}`
	files := map[string]string{
		"components/common/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels: [{pairs: {team: platform}}]\n",
	}
	var layers []string
	for i := range 12 {
		dir := fmt.Sprintf("layer-%02d", i)
		layers = append(layers, dir)
		name := fmt.Sprintf("app-%02d", i)
		switch i % 4 {
		case 0: // a strategic merge patch: reads the built-in schema
			files[dir+"/kustomization.yaml"] = "namespace: ns\nresources: [deploy.yaml]\ncomponents: [../components/common]\n" +
				"patches:\n- patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: " + name + "}\n" +
				"    spec: {template: {spec: {containers: [{name: app, image: nginx:2}]}}}\n"
			files[dir+"/deploy.yaml"] = deploy(name)
		case 1: // its own schema: resets the global one around the build
			files[dir+"/kustomization.yaml"] = "openapi: {path: schema.json}\nresources: [thing.yaml]\n" +
				"patches:\n- patch: |\n    apiVersion: example.com/v1\n    kind: Thing\n    metadata: {name: t}\n    spec: {items: [{name: a, v: 3}]}\n"
			files[dir+"/schema.json"] = schema
			files[dir+"/thing.yaml"] = thing
		case 2: // deprecated fields: kustomize warns on os.Stderr
			files[dir+"/kustomization.yaml"] = "commonLabels: {app: " + name + "}\nresources: [deploy.yaml]\npatchesStrategicMerge: [patch.yaml]\n"
			files[dir+"/deploy.yaml"] = deploy(name)
			files[dir+"/patch.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + "}\nspec: {replicas: 3}\n"
		default: // generated, with a generator and images, and a cluster-scoped object to substitute
			files[dir+"/kustomization.yaml"] = "namePrefix: p-\nresources: [deploy.yaml, role.yaml]\nimages: [{name: nginx, newTag: '3'}]\n" +
				"configMapGenerator: [{name: cfg, literals: [a=b]}]\n"
			files[dir+"/deploy.yaml"] = deploy(name)
			files[dir+"/role.yaml"] = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader-${TEAM}\n" +
				"rules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n"
		}
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}

	build := func(dir string) (string, error) {
		objs, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./" + dir}})
		if err != nil {
			return "", err
		}
		var out string
		for _, o := range objs {
			b, err := yaml.Marshal(o.Node)
			if err != nil {
				return "", err
			}
			out += fmt.Sprintf("# %s %s/%s %s:%d\n%s", o.Kind, o.Namespace, o.Name, o.File, o.Line, b)
		}
		return out, nil
	}
	// A preview substitutes, and names each object as Flux does: a
	// ClusterRole keeps no namespace only when the schema says it is
	// cluster-scoped.
	preview := func(dir string) (string, error) {
		ks := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: dir, Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{Path: "./" + dir, TargetNamespace: "apps",
				PostBuild: &kustomizev1.PostBuild{Substitute: map[string]string{"TEAM": "platform"}}},
		}
		out, err := Preview(t.Context(), Source{Dir: root}, ks)
		return string(out), err
	}
	alone := map[string]string{}
	for _, dir := range layers {
		out, err := build(dir)
		require.NoError(t, err, dir)
		alone[dir] = out
		out, err = preview(dir)
		require.NoError(t, err, dir)
		alone["preview "+dir] = out
	}
	require.Contains(t, alone["preview layer-03"], "name: p-reader-platform\n", "the ClusterRole is not substituted")
	require.NotContains(t, alone["preview layer-03"], "name: p-reader-platform\n  namespace: apps", "the ClusterRole took the target namespace")
	// The openapi layer's own schema merges its list by name; the
	// built-in one would replace it. A schema left behind by a
	// concurrent build, or missed, shows here.
	require.Contains(t, alone["layer-01"], "name: b", "the openapi layer's patch did not merge by its schema")

	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string][]string{}
	for round := range 4 {
		for _, dir := range layers {
			wg.Go(func() {
				out, err := build(dir)
				assert.NoError(t, err, "round %d, %s", round, filepath.Base(dir))
				mu.Lock()
				got[dir] = append(got[dir], out)
				mu.Unlock()
			})
			wg.Go(func() {
				out, err := preview(dir)
				assert.NoError(t, err, "round %d, preview %s", round, filepath.Base(dir))
				mu.Lock()
				got["preview "+dir] = append(got["preview "+dir], out)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for key, outs := range got {
		for _, out := range outs {
			assert.Equal(t, alone[key], out, "%s beside the others differs from it alone", key)
		}
	}
}
