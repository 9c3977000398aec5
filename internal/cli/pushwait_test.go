package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// layerAt is a Kustomization Ready at revision; sourceAt the OCIRepository
// serving it.
func layerAt(name, revision string, deps ...string) map[string]any {
	return fluxObject("Kustomization", name, deps, "True", "ReconciliationSucceeded", "Applied revision: "+revision,
		map[string]any{"lastAppliedRevision": revision, "lastAttemptedRevision": revision})
}

func sourceAt(revision string) map[string]any {
	return fluxObject("OCIRepository", "platform", nil, "True", "Succeeded", "stored artifact", map[string]any{"artifact": map[string]any{"revision": revision}})
}

// pushedTree is tree pushed once to a registry of its own, tag main.
type pushedTree struct {
	reg      *testutil.Registry
	dir, url string
	meta     []string
	res      struct{ Digest string }
}

// pushOnce pushes tree and returns what a push --wait of it again needs.
func pushOnce(t *testing.T) pushedTree {
	t.Helper()
	p := pushedTree{reg: testutil.NewRegistry(t), dir: t.TempDir(), meta: []string{"--source", "https://example.com/platform.git", "--revision", "main@sha1:1111"}}
	testutil.WriteFiles(t, p.dir, tree)
	p.url = "oci://" + p.reg.Host + "/platform:main"
	stdout, stderr, code := run(t, append([]string{"push", p.dir, p.url, "-o", "json"}, p.meta...)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &p.res))
	return p
}

// TestPushWait: push --wait exits as wait does, for the digest it pushed:
// 0 once the cluster runs it, 2 at --timeout while the cluster runs
// another, 1 when a layer failed for good.
func TestPushWait(t *testing.T) {
	p := pushOnce(t)
	reg, dir, url, meta, res, pushed := p.reg, p.dir, p.url, p.meta, p.res, "main@"+p.res.Digest

	for _, tt := range []struct {
		name, stderr string
		code         int
		cluster      []map[string]any
		args         []string
	}{
		{"applied", "2 layers: 2 Ready", cli.ExitOK, []map[string]any{sourceAt(pushed), layerAt("a", pushed), layerAt("b", pushed, "a")}, nil},
		{"another revision", "not every layer Ready within --timeout 2s", cli.ExitError,
			[]map[string]any{sourceAt(fakeRevision), layerAt("a", fakeRevision)}, []string{"--timeout", "2s"}},
		{"failed", "Kustomization/flux-system/b failed (terminal): kustomize build failed: missing.yaml", cli.ExitFinding, []map[string]any{sourceAt(pushed), layerAt("a", fakeRevision),
			fluxObject("Kustomization", "b", []string{"a"}, "False", "BuildFailed", "kustomize build failed: missing.yaml", map[string]any{"lastAttemptedRevision": pushed})}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, kubeconfig := startFakeKube(t, tt.cluster...)
			args := append([]string{"push", dir, url, "--wait", "--kubeconfig", kubeconfig}, meta...)
			stdout, stderr, code := run(t, append(args, tt.args...)...)
			assert.Equal(t, tt.code, code, "fluxpack push --wait %v: stdout:\n%s\nstderr:\n%s", tt.args, stdout, stderr)
			assert.Equal(t, reg.Host+"/platform@"+res.Digest+"\n", stdout, "stdout holds the push's result alone")
			assert.Contains(t, stderr, tt.stderr)
		})
	}

	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"cluster flags need --wait", []string{"push", dir, url, "--context", "prod"}, "--context is for --wait"},
		{"not with --fleet", []string{"push", "--fleet", "fleet.yaml", "--wait"}, "--wait is for one artifact, not --fleet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, tt.args...)
			assert.Equal(t, cli.ExitError, code, stderr)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestPushWaitOtherSource: push --wait asks the pushed digest only of the
// Kustomizations reading the pushed repository; a flux-system
// Kustomization on another source must only be Ready on it.
func TestPushWaitOtherSource(t *testing.T) {
	p := pushOnce(t)
	reg, dir, url, meta, pushed := p.reg, p.dir, p.url, p.meta, "main@"+p.res.Digest

	platform := sourceAt(pushed)
	platform["spec"].(map[string]any)["url"] = "oci://" + reg.Host + "/platform"
	git := fluxObject("OCIRepository", "flux-system", nil, "True", "Succeeded", "stored artifact", map[string]any{"artifact": map[string]any{"revision": fakeRevision}})
	git["spec"].(map[string]any)["url"] = "oci://" + reg.Host + "/bootstrap"
	root := layerAt("flux-system", fakeRevision)
	root["spec"].(map[string]any)["sourceRef"] = map[string]any{"kind": "OCIRepository", "name": "flux-system"}
	_, kubeconfig := startFakeKube(t, platform, git, root, layerAt("a", pushed))
	_, stderr, code := run(t, append([]string{"push", dir, url, "--wait", "--kubeconfig", kubeconfig, "--timeout", "1m"}, meta...)...)
	assert.Equal(t, cli.ExitOK, code, "push --wait with flux-system on another source: %s", stderr)
	assert.Contains(t, stderr, "2 layers: 2 Ready")
}
