package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The commands that read repositories collect less often; the others keep
// Go's defaults, and so does every command when GOGC or GOMEMLIMIT is set.
func TestGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"diff", "clusters/prod", "--base", "HEAD~1"}, true}, {[]string{"lint", "x"}, true}, {[]string{"graph"}, true},
		{[]string{"import"}, true}, {[]string{"preview"}, true}, {[]string{"render", "-f", "stack.yaml"}, true},
		{[]string{"--debug", "lint", "x"}, true},
		{[]string{"push", "dir", "oci://x/y:z"}, false}, {[]string{"pull"}, false}, {[]string{"version"}, false},
		{[]string{"registry", "serve"}, false}, {nil, false}, {[]string{"no-such-command"}, false},
	} {
		percent, limit, ok := GC(tc.args)
		assert.Equal(t, tc.want, ok, "%v", tc.args)
		if ok {
			assert.Equal(t, readingGCPercent, percent)
			assert.Equal(t, int64(readingMemoryGiB<<30), limit)
		}
	}
	t.Setenv("GOGC", "100")
	_, _, ok := GC([]string{"lint", "x"})
	assert.False(t, ok, "GOGC set: the user's choice stands")
}
