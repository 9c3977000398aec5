package yamlutil_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{
		"a: 1\n",
		"a: &m {x: 1}\nb: *m\nc: *m\n",           // used twice, no cycle
		"a: &m {x: &n [1]}\nb: {y: *n, z: *m}\n", // nested anchors
		"a: &m {n: *m\n",                         // not YAML: the reader's problem
		"x: '&*'\n",                              // looks like it
	} {
		assert.NoError(t, yamlutil.Check([]byte(ok)), "%q", ok)
	}
	for _, bad := range []string{
		"a: &m {n: *m}\n",
		"a: &m [1, [*m]]\n",
		"x: 1\n---\na: &m {b: {c: &n {d: *m}}}\n",
		"a: &m {b: &n {c: *n}}\n",
	} {
		err := yamlutil.Check([]byte(bad))
		assert.ErrorContains(t, err, "is inside the node its anchor names", "%q", bad)
	}
	assert.ErrorContains(t, yamlutil.Check([]byte("x: 1\n---\na: &m {b: {c: &n {d: *m}}}\n")), "line 3: alias *m")
}
