package regutil_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

func TestIsScheme(t *testing.T) {
	tests := map[string]bool{
		"oci":          true,
		"awskms":       true,
		"git+ssh":      true,
		"a1.b-c":       true,
		"":             false,
		"1oci":         false,
		"token@":       false,
		"user:pass":    false,
		"with space":   false,
		"-leading":     false,
		"hashivault":   true,
		"k8s":          true,
		"ünicode":      false,
		"UPPER":        true,
		"oci/registry": false,
	}
	for s, want := range tests {
		assert.Equal(t, want, regutil.IsScheme(s), "IsScheme(%q)", s)
	}
}
