package substitute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/substitute"
)

// TestApplied: a name as Flux applies it under an inline substitute, with
// and without substituteFrom beside it.
func TestApplied(t *testing.T) {
	vars := map[string]string{"APP": "immich", "NL": "a\nb"}
	for _, c := range []struct {
		in   string
		all  bool
		want string
		ok   bool
	}{
		{in: "plain", want: "plain", ok: true},
		{in: "${APP}-db", want: "immich-db", ok: true},
		{in: "${APP}-${OTHER}", ok: false},            // OTHER may come from substituteFrom
		{in: "${APP}-${OTHER}", all: true, ok: false}, // unset, no default: Flux fails (strict mode)
		{in: "${OTHER:=x}-db", all: true, want: "x-db", ok: true},
		{in: "${NL}", want: "ab", ok: true},
		{in: "${bad.name}", ok: false},
	} {
		got, ok := substitute.Applied(c.in, vars, c.all)
		assert.Equal(t, c.ok, ok, c.in)
		if c.ok {
			assert.Equal(t, c.want, got, c.in)
		}
	}
}
