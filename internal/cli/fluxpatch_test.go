package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// flux-patch prints what fluxpatch.Render writes; bad flags are errors
// that print nothing on stdout.
func TestFluxPatchCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring stderr must hold
	}{
		{name: "bootstrap", args: []string{"flux-patch"}},
		{name: "fluxinstance", args: []string{"flux-patch", "--format", "fluxinstance", "--requeue-dependency", "10s"}},
		{name: "kustomize-controller", args: []string{"flux-patch", "--controller", "kustomize-controller", "--requeue-dependency", "1s"}},
		{name: "too-short", args: []string{"flux-patch", "--requeue-dependency", "500ms"}, code: cli.ExitError, stderr: "requeue dependency 500ms: must be at least 1s"},
		{name: "bad-duration", args: []string{"flux-patch", "--requeue-dependency", "5"}, code: cli.ExitError, stderr: `invalid argument "5" for "--requeue-dependency"`},
		{name: "bad-format", args: []string{"flux-patch", "--format", "helm"}, code: cli.ExitError, stderr: `unknown patch format "helm"`},
		{name: "bad-controller", args: []string{"flux-patch", "--controller", "source-controller"}, code: cli.ExitError, stderr: `controller "source-controller": only kustomize-controller and helm-controller`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			assert.Equal(t, tt.code, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(tt.args, " "), stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			got := stdout
			if code != cli.ExitOK {
				assert.Empty(t, stdout, "an error prints nothing on stdout")
				got += "--- stderr ---\n" + stderr
			}
			testutil.Golden(t, "fluxpatch/"+tt.name, []byte(got))
		})
	}
}
