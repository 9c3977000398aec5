package cli_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// TestErrorsIsThroughCommands runs commands whose library call fails and
// checks that the command returns the library's error, still matching its
// sentinel and type (errors.Is, errors.As), and that Main prints it once,
// whole, and exits with ExitError.
func TestErrorsIsThroughCommands(t *testing.T) {
	const infra = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec:
  interval: 10m
  path: ./infra
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`
	missing := t.TempDir()
	testutil.WriteFiles(t, missing, map[string]string{
		".git/HEAD":                        "ref: refs/heads/main\n",
		"clusters/prod/kustomization.yaml": "resources: [gone.yaml]\n",
	})
	bogus := t.TempDir()
	testutil.WriteFiles(t, bogus, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		"clusters/prod/infra.yaml": infra + "  deletionPolicy: Bogus\n",
		"infra/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
	})

	tests := []struct {
		name   string
		args   []string
		is     error
		as     func(error) bool
		stderr string
	}{
		{
			name: "lint-missing-file",
			args: []string{"lint", filepath.Join(missing, "clusters", "prod")},
			is:   fs.ErrNotExist,
			as: func(err error) bool {
				var pe *fs.PathError
				return errors.As(err, &pe) && pe.Path == filepath.Join(missing, "clusters", "prod", "gone.yaml")
			},
			stderr: filepath.Join(missing, "clusters", "prod", "gone.yaml") + ": no such file or directory",
		},
		{
			name:   "import-invalid-option",
			args:   []string{"import", filepath.Join(bogus, "clusters", "prod")},
			is:     fluxrepo.ErrInvalidOption,
			as:     func(err error) bool { var le *layering.LayerError; return errors.As(err, &le) && le.Layer == "infra" },
			stderr: `layer "infra": invalid deletionPolicy "Bogus"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cli.NewRoot("test")
			root.SetArgs(tt.args)
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			err := root.ExecuteContext(t.Context())
			require.Error(t, err, "fluxpack %s", strings.Join(tt.args, " "))
			assert.ErrorIs(t, err, tt.is, "fluxpack %s: %v", strings.Join(tt.args, " "), err)
			assert.True(t, tt.as(err), "fluxpack %s: errors.As found no error naming the object: %v", strings.Join(tt.args, " "), err)

			var stdout, stderr bytes.Buffer
			code := cli.Main(t.Context(), "test", tt.args, &stdout, &stderr)
			assert.Equal(t, cli.ExitError, code, "fluxpack %s: exit code", strings.Join(tt.args, " "))
			assert.Empty(t, stdout.String(), "fluxpack %s: stdout", strings.Join(tt.args, " "))
			assert.Equal(t, 1, strings.Count(stderr.String(), "fluxpack: "), "fluxpack %s: the error is printed once:\n%s", strings.Join(tt.args, " "), stderr.String())
			assert.Contains(t, stderr.String(), "fluxpack: "+err.Error(), "fluxpack %s: Main prints the error whole", strings.Join(tt.args, " "))
			assert.Contains(t, stderr.String(), tt.stderr, "fluxpack %s: stderr", strings.Join(tt.args, " "))
		})
	}
}
