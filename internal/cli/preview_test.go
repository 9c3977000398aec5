package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/substitute"
)

// TestPreviewCommand runs `fluxpack preview` on package substitute's preview
// directories (held to Flux's own output by substitute's tests): stdout is
// what substitute.Preview gives, a Secret's values are REDACTED unless
// --show-secrets, and nothing is written into the directory.
func TestPreviewCommand(t *testing.T) {
	root := testutil.RepoRoot(t)
	cases := filepath.Join(root, "substitute", "testdata", "preview")
	secrets := []string{"hunter2-s3cr3t", "tok-9f8e7d"} // the values of substitutefrom/vars.yaml's Secret
	tests := []struct {
		name    string
		dir     string
		args    []string
		secrets bool // stdout may hold the Secret's values
	}{
		{name: "plain", dir: "plain"},
		{name: "overlay", dir: "overlay", args: []string{"--name", "infra"}},
		{name: "substitutefrom", dir: "substitutefrom", args: []string{"--vars-from", filepath.Join(cases, "substitutefrom", "vars.yaml")}},
		{name: "substitutefrom-show-secrets", dir: "substitutefrom", args: []string{"--vars-from", filepath.Join(cases, "substitutefrom", "vars.yaml"), "--show-secrets"}, secrets: true},
		{name: "disabled-lax", dir: "disabled", args: []string{"--strict-substitute=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(cases, tt.dir)
			before := testutil.ReadFiles(t, dir)
			args := append([]string{"preview", "--path", filepath.Join(dir, "dir"), "--kustomization-file", filepath.Join(dir, "ks.yaml")}, tt.args...)
			stdout, stderr, code := run(t, args...)
			require.Equal(t, cli.ExitOK, code, "stderr:\n%s", stderr)
			assert.Empty(t, stderr)
			for _, s := range secrets {
				assert.NotContains(t, stderr, s)
				if !tt.secrets {
					assert.NotContains(t, stdout, s, "a Secret's value on stdout without --show-secrets")
				}
			}
			if tt.secrets {
				assert.Contains(t, stdout, secrets[0])
			}
			assert.Equal(t, before, testutil.ReadFiles(t, dir), "preview wrote into the directory")
			testutil.Golden(t, "preview/"+tt.name, []byte(stdout))
		})
	}
}

// TestPreviewMatchesLibrary: the command prints what substitute.Preview
// returns (with --show-secrets, nothing redacted), which substitute's tests
// hold to Flux's own output.
func TestPreviewMatchesLibrary(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := filepath.Join(root, "substitute", "testdata", "preview", "substitutefrom")
	vars := filepath.Join(dir, "vars.yaml")
	stdout, stderr, code := run(t, "preview", "--path", filepath.Join(dir, "dir"), "--kustomization-file", filepath.Join(dir, "ks.yaml"), "--vars-from", vars, "--show-secrets")
	require.Equal(t, cli.ExitOK, code, "stderr:\n%s", stderr)
	want, err := substitute.PreviewFile(filepath.Join(dir, "dir"), filepath.Join(dir, "ks.yaml"), "", substitute.WithVarsFrom(vars))
	require.NoError(t, err)
	assert.Equal(t, string(want), stdout)
	golden, err := os.ReadFile(filepath.Join(dir, "want.golden"))
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(golden)), strings.TrimSpace(stdout), "substitute's golden file, held to Flux")
}
