package bootstrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What a justfile's assignment is written out as, expression by
// expression; what only running tells is left alone.
func TestJustValue(t *testing.T) {
	vars := map[string]string{"base": "/repo/kubernetes"}
	for _, tt := range []struct {
		expr, want string
		ok         bool
	}{
		{`justfile_dir() + '/bootstrap'`, "/repo/bootstrap", true},
		{`justfile_directory() + "/bootstrap"`, "/repo/bootstrap", true},
		{`source_dir() / 'resources'`, "/repo/bootstrap/resources", true},
		{`module_directory()`, "/repo/bootstrap", true},
		{`base / "apps" / 'main'`, "/repo/kubernetes/apps/main", true},
		{`'a' + 'b'`, "ab", true},
		{`'it''s'`, "", false},
		{"`git rev-parse --show-toplevel`", "", false},
		{`env('ROOT') + '/x'`, "", false},
		{`unknown + '/x'`, "", false},
		{`"a\tb"`, "", false},
		{`justfile_dir() +`, "", false},
	} {
		got, ok := justValue(tt.expr, "/repo", "/repo/bootstrap", vars)
		assert.Equal(t, tt.ok, ok, "justValue(%s)", tt.expr)
		assert.Equal(t, tt.want, got, "justValue(%s)", tt.expr)
	}
}
