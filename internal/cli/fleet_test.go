package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// fleetDir copies layering's fleet fixture with its artifacts on host.
func fleetDir(t *testing.T, host string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../layering/testdata/fleet")))
	file := filepath.Join(dir, "fleet.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), "registry.example.com", host, 1)), 0o644))
	return dir
}

// render, lint and push take --fleet: a directory, a finding, a line per
// cluster.
func TestFleetCommands(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := fleetDir(t, reg.Host)
	file := filepath.Join(dir, "fleet.yaml")

	out, secrets := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "secrets")
	stdout, stderr, code := run(t, "render", "--fleet", file, "-d", out, "--secret-dir", secrets)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "prod/layers/backup.yaml\n")
	assert.Contains(t, stdout, "staging/layers/observability.yaml\n")
	assert.Contains(t, stdout, filepath.Join(secrets, "prod.secret.yaml")+"\n")

	_, stderr, code = run(t, "render", "--fleet", file, "-f", filepath.Join(dir, "stack.yaml"), "-d", out)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "give a stack file with -f or a fleet file with --fleet")
	_, stderr, code = run(t, "render", "--fleet", file, "--secret-file", "x.yaml", "-d", out)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "use --secret-dir")

	stdout, _, code = run(t, "lint", "--fleet", file)
	assert.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, stdout, `all clusters: `)
	assert.Contains(t, stdout, `variable "domain" is not set`)
	assert.Contains(t, stdout, `cluster staging: `)
	assert.Contains(t, stdout, `variable "retention" is not set`)

	stdout, stderr, code = run(t, "push", "--fleet", file, "--insecure-registry", "--jobs", "2")
	require.Equal(t, cli.ExitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2, stdout)
	assert.True(t, strings.HasPrefix(lines[0], "staging pushed "+reg.Host+"/platform/staging@sha256:"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "prod pushed "+reg.Host+"/platform/prod@sha256:"), lines[1])

	stdout, stderr, code = run(t, "push", "--fleet", file, "--insecure-registry", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	var res []fleet.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Len(t, res, 2)
	for _, r := range res {
		assert.Equal(t, fleet.Unchanged, r.Status)
	}

	// A cluster that cannot be reached fails alone, and the exit says so.
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, append(data, "    - {name: lost, outputs: terraform/staging.json, artifact: \"oci://127.0.0.1:1/platform/lost:main\"}\n"...), 0o644))
	stdout, stderr, code = run(t, "push", "--fleet", file, "--insecure-registry", "--timeout", "10s")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stdout, "staging unchanged ")
	assert.Contains(t, stdout, "lost failed: ")
	assert.Contains(t, stderr, "1 of 3 clusters failed")

	_, stderr, code = run(t, "push", "--fleet", file, "extra")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, `"extra"`)
}

// promote moves prod's tag to staging's artifact, by cluster name with
// --fleet or by URL and tag, and refuses what does not verify.
func TestPromoteCommand(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := fleetDir(t, reg.Host)
	file := filepath.Join(dir, "fleet.yaml")
	_, stderr, code := run(t, "push", "--fleet", file, "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	staging, _, code := run(t, "list", "oci://"+reg.Host+"/platform/staging", "--insecure-registry")
	require.Equal(t, cli.ExitOK, code)

	stdout, stderr, code := run(t, "promote", "--fleet", file, "prod", "--from", "staging", "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, reg.Host+"/platform/prod:main@sha256:"), stdout)
	assert.Contains(t, stderr, "promoted: the tag moved")
	digest := strings.TrimSpace(stdout[strings.Index(stdout, "@")+1:])
	assert.Contains(t, staging, digest, "prod now holds staging's artifact")

	stdout, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main", "--from", "oci://"+reg.Host+"/platform/staging:main", "--insecure-registry", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, `"pushed": false`)
	assert.Contains(t, stderr, "unchanged: the tag already holds the artifact")

	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v2", "--from", "main", "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)

	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v3", "--from", "main", "--insecure-registry", "--key", pub)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "is unsigned: not verified")

	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--from is required")
}
