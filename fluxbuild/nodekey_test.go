package fluxbuild_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// NodeKey says two trees are the same exactly when decoding them gives
// the same: where they are and their comments do not count; a value's
// style, tag, anchor, or any node does.
func TestNodeKey(t *testing.T) {
	key := func(doc string) string {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(doc), &n))
		k, err := fluxbuild.NodeKey(&n)
		require.NoError(t, err, doc)
		return string(k)
	}
	base := "metadata:\n  name: app\nspec:\n  replicas: 1\n  path: ./apps\n"
	same := map[string]string{
		"further down":   "\n\n\n" + base,
		"commented":      "# head\nmetadata:\n  name: app # the app\nspec:\n  replicas: 1\n  path: ./apps\n# foot\n",
		"indented wider": "metadata:\n    name: app\nspec:\n    replicas: 1\n    path: ./apps\n",
	}
	for name, doc := range same {
		assert.Equal(t, key(base), key(doc), name)
	}
	other := map[string]string{
		"a quoted number": "metadata:\n  name: app\nspec:\n  replicas: \"1\"\n  path: ./apps\n",
		"a tag":           "metadata:\n  name: app\nspec:\n  replicas: !!str 1\n  path: ./apps\n",
		"another value":   "metadata:\n  name: app\nspec:\n  replicas: 2\n  path: ./apps\n",
		"an anchor":       "metadata:\n  name: &n app\nspec:\n  replicas: 1\n  path: ./apps\n",
		"another order":   "spec:\n  replicas: 1\n  path: ./apps\nmetadata:\n  name: app\n",
		"a flow mapping":  "metadata: {name: app}\nspec:\n  replicas: 1\n  path: ./apps\n",
		"one more key":    base + "status: {}\n",
	}
	for name, doc := range other {
		assert.NotEqual(t, key(base), key(doc), name)
	}
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("a: &x 1\nb: *x\n"), &n))
	_, err := fluxbuild.NodeKey(&n)
	assert.Error(t, err, "a tree with an alias has no key")
}
