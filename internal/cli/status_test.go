package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

const webhookFailure = `ClusterSecretStore/vault-backend dry-run failed: Internal error occurred: failed calling webhook "validate.clustersecretstore.external-secrets.io": failed to call webhook: Post "https://external-secrets-webhook.external-secrets.svc:443/validate-external-secrets-io-v1-clustersecretstore?timeout=5s": dial tcp 10.96.0.12:443: connect: connection refused`

// racyCluster is helm-operators' naive cluster in the middle of its
// bootstrap: crs failing on the operator's webhook, apps waiting on it.
func racyCluster() []map[string]any {
	return []map[string]any{
		readySource(),
		readyLayer("operator"),
		fluxObject("Kustomization", "crs", nil, "False", "ReconciliationFailed", webhookFailure, map[string]any{"lastAttemptedRevision": fakeRevision}),
		fluxObject("Kustomization", "apps", []string{"crs"}, "False", "DependencyNotReady", "dependency 'flux-system/crs' is not ready", nil),
	}
}

type statusJSON struct {
	Layers []struct {
		Kind, Name, State string
		WaitingOn         []string `json:"waitingOn"`
	} `json:"layers"`
	Blocking []struct {
		Name, State, Message string
		Holds                []string
		Explanation          *struct{ Rule, Edge, Fix, Finding string }
	} `json:"blocking"`
	Done bool `json:"done"`
}

func TestStatusCommand(t *testing.T) {
	fk, kubeconfig := startFakeKube(t, racyCluster()...)
	stdout, stderr, code := run(t, "status", "--kubeconfig", kubeconfig, "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	var got statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	var states []string
	for _, l := range got.Layers {
		states = append(states, l.Name+" "+l.State+" "+strings.Join(l.WaitingOn, ","))
	}
	assert.Equal(t, []string{"crs Failed ", "apps WaitingOn flux-system/crs", "operator Ready "}, states, "the layers along the graph")
	require.Len(t, got.Blocking, 1, "crs blocks; apps merely waits")
	b := got.Blocking[0]
	assert.Equal(t, "crs", b.Name)
	assert.Equal(t, []string{"flux-system/apps"}, b.Holds)
	require.NotNil(t, b.Explanation)
	assert.Equal(t, "webhook-order", b.Explanation.Rule)
	assert.Empty(t, b.Explanation.Edge, "without ENTRY, no lint finding names the missing edge")
	assert.False(t, got.Done)

	// One LIST per kind, after discovery; no watch.
	var lists, watches []string
	for _, r := range fk.Requests() {
		switch {
		case strings.HasPrefix(r, "WATCH "):
			watches = append(watches, r)
		case strings.HasSuffix(r, "/kustomizations") || strings.HasSuffix(r, "/ocirepositories"):
			lists = append(lists, r)
		}
	}
	slices.Sort(lists)
	assert.Equal(t, []string{"GET /apis/kustomize.toolkit.fluxcd.io/v1/kustomizations", "GET /apis/source.toolkit.fluxcd.io/v1/ocirepositories"}, lists)
	assert.Empty(t, watches)
}

// TestStatusExplainsWithLint: given the repository the cluster runs,
// status attaches lint's webhook-order finding on crs, with the missing
// dependsOn and its file.
func TestStatusExplainsWithLint(t *testing.T) {
	_, kubeconfig := startFakeKube(t, racyCluster()...)
	ho := filepath.Join(testutil.RepoRoot(t), "fluxrepo", "testdata", "repos", "helm-operators")
	stdout, stderr, code := run(t, "status", filepath.Join(ho, "clusters", "naive"), "--root", ho, "--kubeconfig", kubeconfig)
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "linted the repository to explain failures with its findings")
	for _, want := range []string{
		"Blocking:\n  Kustomization/flux-system/crs Failed, holding 1 layer(s): flux-system/apps\n",
		"    message: " + webhookFailure + "\n",
		"    rule: webhook-order\n",
		"    missing edge: crs dependsOn operator\n",
		`    fix: add "operator" to spec.dependsOn of layer "crs" (`,
		"    lint: infrastructure/crs/clustersecretstore.yaml:1: ",
	} {
		assert.Contains(t, stdout, want)
	}
}

func TestStatusWatchRequests(t *testing.T) {
	fk, kubeconfig := startFakeKube(t, racyCluster()...)
	stdout, stderr, code := run(t, "status", "--kubeconfig", kubeconfig, "--watch", "--timeout", "300ms")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "Blocking:", "the first snapshot, in full")
	var watches []string
	for _, r := range fk.Requests() {
		if strings.HasPrefix(r, "WATCH ") {
			watches = append(watches, r)
		}
	}
	slices.Sort(watches)
	assert.Equal(t, []string{"WATCH /apis/kustomize.toolkit.fluxcd.io/v1/kustomizations", "WATCH /apis/source.toolkit.fluxcd.io/v1/ocirepositories"}, watches,
		"one watch per kind, no polling")
}

func TestWaitCommand(t *testing.T) {
	for _, tt := range []struct {
		name    string
		objects []map[string]any
		args    []string
		code    int
		stderr  string
	}{
		{"ready", []map[string]any{readySource(), readyLayer("a"), readyLayer("b", "a")}, nil, cli.ExitOK, "2 layers: 2 Ready"},
		{"revision", []map[string]any{readySource(), readyLayer("a")}, []string{"--revision", "sha256:" + strings.Repeat("1", 64)}, cli.ExitOK, ""},
		{"other revision", []map[string]any{readySource(), readyLayer("a")}, []string{"--revision", "sha256:" + strings.Repeat("2", 64), "--timeout", "200ms"}, cli.ExitError, "not every layer Ready within --timeout 200ms"},
		{"stalled", racyCluster(), []string{"--stalled", "1ms"}, cli.ExitFinding, "Kustomization/flux-system/crs failing since 2026-01-02T03:04:05Z: " + webhookFailure + " [webhook-order]"},
		{"terminal", []map[string]any{readySource(), fluxObject("Kustomization", "a", nil, "False", "BuildFailed", "kustomize build failed: missing.yaml", map[string]any{"lastAttemptedRevision": fakeRevision})},
			nil, cli.ExitFinding, "Kustomization/flux-system/a failed (terminal): kustomize build failed: missing.yaml"},
		{"suspended", []map[string]any{readySource(), fluxObject("Kustomization", "a", nil, "True", "ReconciliationSucceeded", "", map[string]any{"suspend": true})},
			nil, cli.ExitFinding, "Kustomization/flux-system/a suspended"},
		{"timeout", []map[string]any{readySource(), fluxObject("Kustomization", "a", nil, "Unknown", "Progressing", "Reconciliation in progress", nil)},
			[]string{"--timeout", "200ms"}, cli.ExitError, "waiting for Kustomization/flux-system/a Reconciling"},
		{"no kubeconfig", nil, []string{"--kubeconfig", filepath.Join(t.TempDir(), "nope")}, cli.ExitError, "loading the kubeconfig"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, kubeconfig := startFakeKube(t, tt.objects...)
			stdout, stderr, code := run(t, append([]string{"wait", "--kubeconfig", kubeconfig}, tt.args...)...)
			assert.Equal(t, tt.code, code, "fluxpack wait %v: stdout:\n%s\nstderr:\n%s", tt.args, stdout, stderr)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

func TestWaitInterrupted(t *testing.T) {
	_, kubeconfig := startFakeKube(t, readySource(), readyLayer("a"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr strings.Builder
	code := cli.Main(ctx, "test", []string{"wait", "--kubeconfig", kubeconfig}, &stdout, &stderr)
	assert.Equal(t, cli.ExitInterrupted, code, stderr.String())
}

func TestStatusTimeline(t *testing.T) {
	_, kubeconfig := startFakeKube(t, readySource(), readyLayer("a"), readyLayer("b", "a"))
	dir := t.TempDir()
	for _, tt := range []struct {
		file, format, want string
	}{
		{"tl.html", "", `<g class="bar" data-layer="flux-system/a"`},
		{"tl.json", "", `"criticalPath": [`},
		{"tl.out", "html", `<!DOCTYPE html>`},
	} {
		t.Run(tt.file, func(t *testing.T) {
			args := []string{"status", "--kubeconfig", kubeconfig, "--timeline", filepath.Join(dir, tt.file), "--timeout", "1m"}
			if tt.format != "" {
				args = append(args, "-o", tt.format)
			}
			_, stderr, code := run(t, args...)
			require.Equal(t, cli.ExitOK, code, stderr)
			assert.Contains(t, stderr, "every layer was Ready before the recording began: the timeline is reconstructed")
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			require.NoError(t, err)
			assert.Contains(t, string(b), tt.want)
		})
	}
	_, stderr, code := run(t, "status", "--kubeconfig", kubeconfig, "-o", "html")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, `"text" or "json"`)
}
