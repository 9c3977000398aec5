package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPushTarget: the push line registry serve prints reaches the registry
// from the same machine, with --insecure-registry where a plain-HTTP
// registry needs it.
func TestPushTarget(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000":   "oci://127.0.0.1:5000/platform:v1",
		"[::1]:5000":       "oci://[::1]:5000/platform:v1",
		"0.0.0.0:5000":     "oci://127.0.0.1:5000/platform:v1",
		"[::]:5000":        "oci://127.0.0.1:5000/platform:v1",
		"203.0.113.7:5000": "oci://203.0.113.7:5000/platform:v1 --insecure-registry",
	} {
		assert.Equal(t, want, pushTarget(addr), "pushTarget(%q)", addr)
	}
}
