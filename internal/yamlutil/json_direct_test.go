package yamlutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// JSON writes the common shapes itself and leaves the rest to the library
// (TestJSONIsTheLibrarys holds both to the library's bytes): a Flux
// Kustomization as written is the common shape.
func TestJSONWritesTheCommonShapesDirectly(t *testing.T) {
	for doc, direct := range map[string]bool{
		"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  retries: 3\n  dependsOn: [{name: infra}]\n  postBuild: {substitute: {cluster: \"${CLUSTER}\"}, substituteFrom: [{kind: ConfigMap, name: vars, optional: true}]}\n  wait: null\n": true,
		"a: [true, 'x', \"<y>\", -12]\n": true,
		"a: 1.5\n":                       true, // a scalar the library writes, in a tree written directly
		"a: &x {b: c}\nd: *x\n":          false,
		"<<: {a: 1}\nb: 2\n":             false,
		"a: b\na: c\n":                   false,
		"1: a\n":                         false,
	} {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(doc), &n))
		w := jsonWriter{}
		err := w.value(n.Content[0])
		if direct {
			assert.NoError(t, err, "%q", doc)
		} else {
			assert.ErrorIs(t, err, errNotDirect, "%q", doc)
		}
	}
}
