package cli_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
)

// TestStatusStack: status -f STACK and --fleet FLEET --cluster NAME lay the
// cluster out along the stack: the layer the cluster lacks is Missing and
// blocks the one waiting on it.
func TestStatusStack(t *testing.T) {
	dir := fleetDir(t, "registry.example.com")
	stack, fleet := filepath.Join(dir, "stack.yaml"), filepath.Join(dir, "fleet.yaml")
	layers := func(stdout string) (map[string]string, []string) {
		t.Helper()
		var got statusJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
		states := map[string]string{}
		for _, l := range got.Layers {
			states[l.Name] = l.State
		}
		var blocking []string
		for _, b := range got.Blocking {
			blocking = append(blocking, b.Name)
		}
		return states, blocking
	}

	// staging's cluster: observability was never applied; apps waits on it.
	_, staging := startFakeKube(t, readySource(), readyLayer("namespaces"), readyLayer("platform", "namespaces"),
		fluxObject("Kustomization", "apps", []string{"observability"}, "False", "DependencyNotReady", "dependency 'flux-system/observability' is not ready", nil))
	stdout, stderr, code := run(t, "status", "-f", stack, "--kubeconfig", staging, "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stderr, "linted the stack to explain failures with its findings")
	states, blocking := layers(stdout)
	assert.Equal(t, map[string]string{"namespaces": "Ready", "platform": "Ready", "observability": "Missing", "apps": "WaitingOn"}, states)
	assert.Equal(t, []string{"observability"}, blocking)
	stdout, _, code = run(t, "status", "-f", stack, "--kubeconfig", staging)
	require.Equal(t, cli.ExitOK, code)
	assert.Contains(t, stdout, "Kustomization/flux-system/observability does not exist, holding 1 layer(s): flux-system/apps")

	// prod: without observability, with the extra layer backup, which
	// the cluster lacks; its context is the one named prod.
	_, prodKube := startFakeKube(t, readySource(), readyLayer("namespaces"), readyLayer("platform", "namespaces"), readyLayer("apps", "platform"))
	_, other := startFakeKube(t)
	kubeconfig := namedKubeconfig(t, []string{"other", "prod"}, other, prodKube)
	stdout, stderr, code = run(t, "status", "--fleet", fleet, "--cluster", "prod", "--kubeconfig", kubeconfig, "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	states, blocking = layers(stdout)
	assert.Equal(t, map[string]string{"namespaces": "Ready", "platform": "Ready", "apps": "Ready", "backup": "Missing"}, states)
	assert.Equal(t, []string{"backup"}, blocking)

	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"fleet without cluster", []string{"--fleet", fleet}, "--fleet needs --cluster"},
		{"cluster without fleet", []string{"--cluster", "prod"}, "--cluster is for --fleet"},
		{"stack and entry", []string{"-f", stack, dir}, "not two of them"},
		{"stack and fleet", []string{"-f", stack, "--fleet", fleet, "--cluster", "prod"}, "not both"},
		{"unknown cluster", []string{"--fleet", fleet, "--cluster", "qa", "--context", "prod"}, `"qa"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"status", "--kubeconfig", kubeconfig}, tt.args...)...)
			assert.Equal(t, cli.ExitError, code, stderr)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}
