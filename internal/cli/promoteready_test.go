package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

var serverLine = regexp.MustCompile(`server: (\S+)`)

// namedKubeconfig writes a kubeconfig with one context per name, each
// reaching the cluster of the kubeconfig startFakeKube gave it; the
// current context is the first name.
func namedKubeconfig(t *testing.T, names []string, kubeconfigs ...string) string {
	t.Helper()
	var clusters, contexts strings.Builder
	for i, name := range names {
		data, err := os.ReadFile(kubeconfigs[i])
		require.NoError(t, err)
		m := serverLine.FindSubmatch(data)
		require.NotNil(t, m, kubeconfigs[i])
		fmt.Fprintf(&clusters, "- name: %s\n  cluster:\n    server: %s\n", name, m[1])
		fmt.Fprintf(&contexts, "- name: %s\n  context:\n    cluster: %s\n    user: fake\n", name, name)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, "apiVersion: v1\nkind: Config\nclusters:\n%susers:\n- name: fake\n  user:\n    token: fake\ncontexts:\n%scurrent-context: %s\n",
		clusters.String(), contexts.String(), names[0]), 0o600))
	return path
}

// TestPromoteRequireReady: promote --fleet --require-ready reads the --from
// cluster (the kubeconfig context named as it, or --from-context) and
// refuses with exit 1, naming the failing layer and its message, while it
// does not run its artifact Ready, moving nothing; once it does, prod's tag
// moves, and --wait waits for prod to run it.
func TestPromoteRequireReady(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := fleetDir(t, reg.Host)
	file := filepath.Join(dir, "fleet.yaml")
	r1, r2 := "main@sha1:"+strings.Repeat("1", 40), "main@sha1:"+strings.Repeat("2", 40)
	digestOf := func(cluster string) string {
		t.Helper()
		stdout, stderr, code := run(t, "list", "oci://"+reg.Host+"/platform/"+cluster, "-o", "json")
		require.Equal(t, cli.ExitOK, code, stderr)
		var tags []struct{ Tag, Digest string }
		require.NoError(t, json.Unmarshal([]byte(stdout), &tags), stdout)
		for _, tag := range tags {
			if tag.Tag == "main" {
				return tag.Digest
			}
		}
		t.Fatalf("no tag main of %s", cluster)
		return ""
	}
	_, stderr, code := run(t, "push", "--fleet", file, "--revision", r1)
	require.Equal(t, cli.ExitOK, code, stderr)
	prod1, staging1 := digestOf("prod"), "main@"+digestOf("staging")
	for _, c := range []string{"staging", "prod"} {
		p := filepath.Join(dir, "terraform", c+".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), "eu-west", "us-east", 1)), 0o644))
	}
	_, stderr, code = run(t, "push", "--fleet", file, "--revision", r2)
	require.Equal(t, cli.ExitOK, code, stderr)
	staging2, prod2 := "main@"+digestOf("staging"), digestOf("prod")
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform/prod:main", "--from", "main-rev-"+strings.Repeat("1", 40))
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, prod1, digestOf("prod"))

	// staging: a at revision 2, b failing on it. prod: on revision 1.
	_, failing := startFakeKube(t, sourceAt(staging2), layerAt("a", staging2),
		fluxObject("Kustomization", "b", []string{"a"}, "False", "ReconciliationFailed", webhookFailure, map[string]any{"lastAttemptedRevision": staging2}))
	_, prodKube := startFakeKube(t, sourceAt("main@"+prod1), layerAt("a", "main@"+prod1))
	kubeconfig := namedKubeconfig(t, []string{"prod", "staging"}, prodKube, failing)
	promote := []string{"promote", "--fleet", file, "prod", "--from", "staging", "--require-ready", "--kubeconfig", kubeconfig}
	stdout, stderr, code := run(t, promote...)
	assert.Equal(t, cli.ExitFinding, code, "promote --require-ready while staging fails: stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr, `cluster "staging" does not run`)
	assert.Contains(t, stderr, "Kustomization/flux-system/b Failed: "+webhookFailure+" [webhook-order]")
	assert.Empty(t, stdout)
	assert.Equal(t, prod1, digestOf("prod"), "a refused promotion moved prod's tag")

	// staging on revision 1 only: it does not run what its tag holds.
	_, behind := startFakeKube(t, sourceAt(staging1), layerAt("a", staging1))
	kubeconfig = namedKubeconfig(t, []string{"prod", "elsewhere"}, prodKube, behind)
	_, stderr, code = run(t, "promote", "--fleet", file, "prod", "--from", "staging", "--require-ready", "--kubeconfig", kubeconfig)
	assert.Equal(t, cli.ExitError, code, stderr)
	assert.Contains(t, stderr, `the kubeconfig has no context named "staging"`)
	assert.Contains(t, stderr, "--from-context")
	_, stderr, code = run(t, "promote", "--fleet", file, "prod", "--from", "staging", "--require-ready", "--kubeconfig", kubeconfig, "--from-context", "elsewhere")
	assert.Equal(t, cli.ExitFinding, code, stderr)
	assert.Contains(t, stderr, "Kustomization/flux-system/a Ready, applied "+staging1)
	assert.Equal(t, prod1, digestOf("prod"), "a refused promotion moved prod's tag")

	// staging Ready on revision 2: prod's tag moves to prod's own
	// artifact of it, and --wait waits for prod (already there).
	_, readyKube := startFakeKube(t, sourceAt(staging2), layerAt("a", staging2), layerAt("b", staging2, "a"))
	_, prodThere := startFakeKube(t, sourceAt("main@"+prod2), layerAt("a", "main@"+prod2))
	kubeconfig = namedKubeconfig(t, []string{"other", "prod", "staging"}, prodKube, prodThere, readyKube)
	stdout, stderr, code = run(t, append(promote[:len(promote)-1], kubeconfig, "--wait")...)
	require.Equal(t, cli.ExitOK, code, "promote --require-ready --wait once staging is Ready: %s", stderr)
	assert.Equal(t, reg.Host+"/platform/prod:main@"+prod2+"\n", stdout)
	assert.Contains(t, stderr, "1 layers: 1 Ready", "--wait read prod's cluster, the context named as it")
	assert.Equal(t, prod2, digestOf("prod"))

	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"require-ready without a fleet", []string{"promote", "oci://" + reg.Host + "/platform/prod:main", "--from", "v1", "--require-ready"}, "--require-ready is for --fleet"},
		{"from-context without require-ready", []string{"promote", "--fleet", file, "prod", "--from", "staging", "--from-context", "x"}, "--from-context is for --require-ready"},
		{"stalled without wait", []string{"promote", "--fleet", file, "prod", "--from", "staging", "--stalled", "1s"}, "--stalled is for --wait"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, tt.args...)
			assert.Equal(t, cli.ExitError, code, stderr)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}
