package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// run runs fluxpack with args and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), "test", args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// cmdCase is one fluxpack command line and what it must do.
type cmdCase struct {
	name     string
	args     []string
	code     int
	stdout   string // prefix
	inStderr string
}

// check runs the command and checks its exit code, the start of its
// stdout and a part of its stderr; it returns both for further checks.
func (c cmdCase) check(t *testing.T) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, code := run(t, c.args...)
	assert.Equal(t, c.code, code, "fluxpack %s: exit code\nstderr: %s", strings.Join(c.args, " "), stderr)
	assert.True(t, strings.HasPrefix(stdout, c.stdout), "stdout %q, want prefix %q", stdout, c.stdout)
	assert.Contains(t, stderr, c.inStderr)
	return stdout, stderr
}

var tree = map[string]string{
	"crds/crd.yaml":      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: stores.example.com\n",
	"operator/dep.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\n",
	"kustomization.yaml": "resources: [crds, operator]\n",
}

func TestArtifactCommands(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	secretDir := t.TempDir()
	testutil.WriteFiles(t, secretDir, map[string]string{"apps/token.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData:\n  token: hunter2\n"})
	url := "oci://" + reg.Host + "/platform"
	meta := []string{"--source", "https://example.com/platform.git"}

	steps := []struct {
		name   string
		args   []string
		before func()
		code   int
		stderr string // a substring stderr must hold
	}{
		{name: "push", args: append([]string{"push", dir, url + ":v1", "--revision", "main@sha1:1111"}, meta...), stderr: "pushed"},
		{name: "push-unchanged", args: append([]string{"push", dir, url + ":v1", "--revision", "main@sha1:2222", "-o", "json"}, meta...), stderr: "unchanged"},
		{name: "push-unchanged-new-tag", args: append([]string{"push", dir, url + ":v1", "--tag", "latest", "-o", "json"}, meta...),
			stderr: `msg="tag created" url=oci://` + reg.Host + "/platform:latest digest=sha256:"},
		{name: "diff-identical", args: []string{"diff", dir, url + ":v1"}},
		{name: "diff-missing", args: []string{"diff", dir, url + ":v9"}, code: cli.ExitFinding, stderr: "does not exist"},
		{name: "diff-differs", args: []string{"diff", dir, url + ":v1"}, code: cli.ExitFinding, before: func() {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "operator", "dep.yaml"), []byte("changed: true\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "apps.yaml"), []byte("new: true\n"), 0o644))
		}, stderr: "differs from"},
		{name: "push-changed", args: append([]string{"push", dir, url + ":v2", "--revision", "main@sha1:3333", "--tag", "latest", "-o", "json"}, meta...)},
		{name: "tag", args: []string{"tag", url + ":v2", "--tag", "stable", "--tag", "v2.0.0"}},
		{name: "list", args: []string{"list", url}},
		{name: "list-semver-json", args: []string{"list", url, "--semver", ">=2.0.0", "-o", "json"}},
		{name: "list-missing", args: []string{"list", "oci://" + reg.Host + "/acme/big"}, code: cli.ExitError, stderr: "repository not found"},
		{name: "pull", args: []string{"pull", url + ":v1", "-d", filepath.Join(t.TempDir(), "pulled")}},
		{name: "pull-non-empty", args: []string{"pull", url + ":v1", "-d", dir}, code: cli.ExitError, stderr: "directory is not empty"},
		{name: "push-secret", args: []string{"push", secretDir, url + ":v3"}, code: cli.ExitError, stderr: "apps/token.yaml:2: Secret/token: plaintext Secret"},
		{name: "push-bad-ref", args: []string{"push", dir, "https://" + reg.Host + "/platform:v1"}, code: cli.ExitError, stderr: "want oci://HOST/REPOSITORY[:TAG]"},
		{name: "push-missing-dir", args: []string{"push", filepath.Join(dir, "nope"), url + ":v1"}, code: cli.ExitError, stderr: "no such file or directory"},
		{name: "push-bad-output", args: []string{"push", dir, url + ":v1", "-o", "yaml"}, code: cli.ExitError, stderr: `invalid -o/--output "yaml"`},
		{name: "push-bad-annotation", args: []string{"push", dir, url + ":v1", "-a", "novalue"}, code: cli.ExitError, stderr: `invalid --annotation "novalue"`},
		{name: "push-no-args", args: []string{"push"}, code: cli.ExitError, stderr: "accepts 2 arg(s)"},
		{name: "diff-unreachable", args: []string{"diff", dir, "oci://127.0.0.1:1/platform:v1", "--timeout", "2s"}, code: cli.ExitError, stderr: "connection refused"},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		stdout, stderr, code := run(t, s.args...)
		assert.Equal(t, s.code, code, "%s: fluxpack %s: exit code; stderr:\n%s", s.name, strings.Join(s.args, " "), stderr)
		if s.stderr != "" {
			assert.Contains(t, stderr, s.stderr, "%s: stderr", s.name)
		}
		assert.NotContains(t, stdout+stderr, "hunter2", "%s: a secret value was printed", s.name)
		got := stdout
		if code != cli.ExitOK {
			got += "--- stderr ---\n" + stderr
		}
		got = strings.NewReplacer(reg.Host, "REGISTRY", secretDir, "SECRETDIR", dir, "DIR").Replace(got)
		testutil.Golden(t, "artifact/"+s.name, []byte(got))
	}
}

// TestPushTreeCache: push keeps the tree's content digest in the user's
// cache directory, and the next push of the unchanged tree takes it from
// there; with --no-tree-cache it reads every file.
func TestPushTreeCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache directory is set with $XDG_CACHE_HOME on Linux")
	}
	reg := testutil.NewRegistry(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := filepath.Join("testdata", "stacks", "external") // checked out seconds ago at least: not changing
	url := "oci://" + reg.Host + "/cached:v1"
	const hit = "content digest from the tree cache"
	for i, args := range [][]string{
		{"push", dir, url, "--debug"},
		{"push", dir, url, "--debug"},
		{"push", dir, url, "--debug", "--no-tree-cache"},
	} {
		_, stderr, code := run(t, args...)
		require.Equal(t, cli.ExitOK, code, stderr)
		assert.Equal(t, i == 1, strings.Contains(stderr, hit), "fluxpack %s (run %d): %q on stderr", strings.Join(args, " "), i+1, hit)
	}
	entries, err := os.ReadDir(filepath.Join(cache, "fluxpack", "trees"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "cache entries")
}

func TestPushSourceDateEpoch(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	url := "oci://" + reg.Host + "/platform"
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600") // 2026-01-01T00:00:00Z
	_, stderr, code := run(t, "push", dir, url+":v1", "--source", "s", "--revision", "r")
	require.Equal(t, cli.ExitOK, code, stderr)
	stdout, _, code := run(t, "list", url, "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	assert.Contains(t, stdout, `"created": "2026-01-01T00:00:00Z"`)

	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	_, stderr, code = run(t, "push", dir, url+":v2")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, `$SOURCE_DATE_EPOCH "yesterday": want seconds since the epoch`)
}
