package cli_test

import (
	"encoding/json"
	"fmt"
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
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../fleet/testdata/fleet")))
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
	assert.Contains(t, stderr, "the artifact records no source and no revision: the fleet's folder "+dir+" is not in a Git checkout", "a fleet outside Git says what its artifacts lack")

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

// promote --fleet moves prod's tag to prod's own artifact of the revision
// staging runs, never to staging's artifact, and moves nothing when prod
// has none; by URL and tag it moves a tag to what another holds, and
// refuses what does not verify.
func TestPromoteCommand(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := fleetDir(t, reg.Host)
	file := filepath.Join(dir, "fleet.yaml")
	r1, r2 := "main@sha1:"+strings.Repeat("1", 40), "main@sha1:"+strings.Repeat("2", 40)
	digestOf := func(url string) string { // of oci://host/repository:tag
		t.Helper()
		i := strings.LastIndex(url, ":")
		stdout, stderr, code := run(t, "list", url[:i], "--insecure-registry", "-o", "json")
		require.Equal(t, cli.ExitOK, code, stderr)
		var tags []struct{ Tag, Digest string }
		require.NoError(t, json.Unmarshal([]byte(stdout), &tags), stdout)
		for _, tag := range tags {
			if tag.Tag == url[i+1:] {
				return tag.Digest
			}
		}
		t.Fatalf("no tag %s", url)
		return ""
	}
	_, stderr, code := run(t, "push", "--fleet", file, "--insecure-registry", "--revision", r1)
	require.Equal(t, cli.ExitOK, code, stderr)
	prod1 := digestOf("oci://" + reg.Host + "/platform/prod:main")
	// Revision 2 changes both clusters' outputs: both are pushed.
	for _, c := range []string{"staging", "prod"} {
		p := filepath.Join(dir, "terraform", c+".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "eu-west", "us-east", 1)), 0o644))
	}
	_, stderr, code = run(t, "push", "--fleet", file, "--insecure-registry", "--revision", r2)
	require.Equal(t, cli.ExitOK, code, stderr)
	staging2, prod2 := digestOf("oci://"+reg.Host+"/platform/staging:main"), digestOf("oci://"+reg.Host+"/platform/prod:main")
	require.NotEqual(t, prod1, prod2)
	// prod stays on revision 1 (its tag back on its own revision-1 artifact).
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main", "--from", "main-rev-"+strings.Repeat("1", 40), "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, prod1, digestOf("oci://"+reg.Host+"/platform/prod:main"))

	stdout, stderr, code := run(t, "promote", "--fleet", file, "prod", "--from", "staging", "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, reg.Host+"/platform/prod:main@sha256:"), stdout)
	assert.Contains(t, stderr, "promoted: the tag moved")
	digest := strings.TrimSpace(stdout[strings.Index(stdout, "@")+1:])
	assert.Equal(t, prod2, digest, "prod's tag is on prod's own artifact of the revision staging runs")
	assert.NotEqual(t, staging2, digest, "prod was handed staging's render")

	// staging runs a revision prod has no artifact of: promote says so and
	// moves nothing.
	other := t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"cm.yaml": "a: 1\n"})
	_, stderr, code = run(t, "push", other, "oci://"+reg.Host+"/platform/staging:main", "--insecure-registry", "--revision", "main@sha1:"+strings.Repeat("3", 40))
	require.Equal(t, cli.ExitOK, code, stderr)
	_, stderr, code = run(t, "promote", "--fleet", file, "prod", "--from", "staging", "--insecure-registry")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, `cluster "prod" has no artifact of revision main@sha1:`+strings.Repeat("3", 40))
	assert.Equal(t, prod2, digestOf("oci://"+reg.Host+"/platform/prod:main"), "nothing moved")

	// By URL and tag, promote does what it is told, as before.
	stdout, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v1", "--from", "oci://"+reg.Host+"/platform/staging:main", "--insecure-registry", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, `"pushed": true`)
	stdout, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v1", "--from", "oci://"+reg.Host+"/platform/staging:main", "--insecure-registry", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, `"pushed": false`)
	assert.Contains(t, stderr, "unchanged: the tag already holds the artifact")

	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v2", "--from", "main", "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)

	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:v3", "--from", "main", "--insecure-registry", "--key", pub)
	assert.Equal(t, cli.ExitFinding, code, "an unsigned artifact is a failed check, as verify says")
	assert.Contains(t, stderr, "is unsigned: not verified")

	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--from is required")
}

// promote --fleet --render: when prod has no artifact of the revision
// staging runs, it renders and pushes prod's own, then moves prod's tag,
// if the checkout is at that revision; else it names the revision to
// check out and moves nothing. It is for --fleet only, and refused with a
// key the unsigned artifact it pushes would fail.
func TestPromoteRenderCommand(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := fleetDir(t, reg.Host)
	file := filepath.Join(dir, "fleet.yaml")
	testutil.Git(t, dir, "init", "-q", "-b", "trunk")
	testutil.Git(t, dir, "add", ".")
	testutil.Git(t, dir, "commit", "-q", "-m", "r1")
	r1 := testutil.Git(t, dir, "rev-parse", "HEAD")
	_, stderr, code := run(t, "push", "--fleet", file, "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	testutil.WriteFiles(t, dir, map[string]string{"apps/more.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more, namespace: apps}\n"})
	testutil.Git(t, dir, "add", ".")
	testutil.Git(t, dir, "commit", "-q", "-m", "r2")
	r2 := testutil.Git(t, dir, "rev-parse", "HEAD")
	// staging runs revision 2; prod has no artifact of it.
	other := t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"cm.yaml": "a: 1\n"})
	_, stderr, code = run(t, "push", other, "oci://"+reg.Host+"/platform/staging:main", "--insecure-registry", "--revision", "trunk@sha1:"+r2)
	require.Equal(t, cli.ExitOK, code, stderr)
	prod := func() string {
		t.Helper()
		stdout, stderr, code := run(t, "list", "oci://"+reg.Host+"/platform/prod", "--insecure-registry", "-o", "json")
		require.Equal(t, cli.ExitOK, code, stderr)
		var tags []struct{ Tag, Digest string }
		require.NoError(t, json.Unmarshal([]byte(stdout), &tags), stdout)
		out := map[string]string{}
		for _, tag := range tags {
			out[tag.Tag] = tag.Digest
		}
		return fmt.Sprint(out)
	}
	before := prod()
	promote := []string{"promote", "--fleet", file, "prod", "--from", "staging", "--insecure-registry", "--render"}

	testutil.Git(t, dir, "checkout", "-q", r1)
	_, stderr, code = run(t, promote...)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "not at revision trunk@sha1:"+r2+": check that revision out")
	assert.Equal(t, before, prod(), "a refused render pushed or moved a tag of prod")

	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	_, stderr, code = run(t, append(promote, "--key", pub)...)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--render pushes an unsigned artifact")
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main", "--from", "staging", "--render")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--render is for --fleet")

	testutil.Git(t, dir, "checkout", "-q", "trunk")
	stdout, stderr, code := run(t, promote...)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "rendered and pushed the cluster's artifact of the revision")
	assert.Contains(t, stderr, "promoted: the tag moved")
	assert.True(t, strings.HasPrefix(stdout, reg.Host+"/platform/prod:main@sha256:"), stdout)
	digest := strings.TrimSpace(stdout[strings.Index(stdout, "@")+1:])
	after := prod()
	assert.Contains(t, after, "main-rev-"+r2+":"+digest, "prod's tag is on prod's artifact of revision 2, at its revision tag")
	pulled := filepath.Join(t.TempDir(), "prod")
	_, stderr, code = run(t, "pull", "oci://"+reg.Host+"/platform/prod:main", "-d", pulled, "--insecure-registry")
	require.Equal(t, cli.ExitOK, code, stderr)
	_, err := os.Stat(filepath.Join(pulled, "apps", "more.yaml"))
	assert.NoError(t, err, "prod's artifact is not of revision 2")
	_, err = os.Stat(filepath.Join(pulled, "cm.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "prod was handed staging's artifact")
}
