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
	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/substitute"
)

// TestOutputsCommand runs `fluxpack outputs` on package outputs' samples
// and holds what it prints in golden files. A sensitive value reaches stdout
// only with --show-secrets, and the files of -o only in the Secret (0600).
func TestOutputsCommand(t *testing.T) {
	root := testutil.RepoRoot(t)
	samples := filepath.Join(root, "outputs", "testdata", "outputs")
	tf := filepath.Join(samples, "terraform.json")
	outs, err := outputs.Read(tf)
	require.NoError(t, err)
	sensitive := sensitiveValues(outs)
	require.NotEmpty(t, sensitive, "the sample must have sensitive outputs for this test to mean anything")
	out := t.TempDir()

	tests := []struct {
		name       string
		args       []string
		showSecret bool     // stdout may hold the sensitive values
		sensitive  []string // outputs --sensitive names
	}{
		{name: "terraform", args: []string{"outputs", tf, "--name", "cluster-vars"}},
		{name: "terraform-show-secrets", args: []string{"outputs", tf, "--name", "cluster-vars", "--show-secrets"}, showSecret: true},
		{name: "terraform-values-map", args: []string{"outputs", tf, "--name", "cluster-vars", "--namespace", "infra", "--values-map", filepath.Join(samples, "values-map.yaml")}},
		{name: "terraform-rename", args: []string{"outputs", tf, "--name", "cluster-vars", "--rename", "vpc-id=network_id"}},
		{name: "pulumi-format", args: []string{"outputs", filepath.Join(samples, "pulumi.json"), "--name", "stack-vars", "--format", "pulumi"}},
		{name: "pulumi-sensitive", args: []string{"outputs", filepath.Join(samples, "pulumi.json"), "--name", "stack-vars", "--sensitive", "dbPassword"}, sensitive: []string{"dbPassword"}},
		{name: "env", args: []string{"outputs", filepath.Join(samples, "plain.env"), "--name", "env-vars"}},
		{name: "write-dir", args: []string{"outputs", tf, "--name", "cluster-vars", "--values-map", filepath.Join(samples, "values-map.yaml"), "-d", filepath.Join(out, "vars")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			require.Equal(t, cli.ExitOK, code, "stderr:\n%s", stderr)
			in, err := outputs.Read(tt.args[1], outputs.WithSensitive(tt.sensitive...))
			require.NoError(t, err)
			for _, v := range sensitiveValues(in) {
				assert.NotContains(t, stderr, v, "a sensitive value in stderr")
				if !tt.showSecret {
					assert.NotContains(t, stdout, v, "a sensitive value on stdout without --show-secrets")
				}
			}
			got := strings.NewReplacer(root, "ROOT", out, "OUT").Replace(stdout + "--- stderr ---\n" + stderr)
			testutil.Golden(t, "outputs/"+tt.name, []byte(got))
		})
	}

	// -o wrote every object, the sensitive values only into the Secret.
	files := testutil.ReadFiles(t, filepath.Join(out, "vars"))
	require.Contains(t, files, "secret-cluster-vars.yaml")
	require.Contains(t, files, "configmap-cluster-vars.yaml")
	for name, content := range files {
		if name == "secret-cluster-vars.yaml" {
			continue
		}
		for _, v := range sensitive {
			assert.NotContains(t, content, v, "sensitive value in %s", name)
		}
	}
	fi, err := os.Stat(filepath.Join(out, "vars", "secret-cluster-vars.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the Secret file is private")
}

// sensitiveValues are the values of outs' sensitive outputs. (Pulumi's JSON
// does not mark secrets: with --show-secrets they are plain values.)
func sensitiveValues(outs *outputs.Outputs) []string {
	var vs []string
	for _, o := range outs.List {
		if o.Sensitive {
			vs = append(vs, o.Value)
		}
	}
	return vs
}

// TestPreviewCommand: fluxpack preview prints what internal/preview builds
// (tested there against Flux's own code), from flags.
func TestPreviewCommand(t *testing.T) {
	testdata := filepath.Join(testutil.RepoRoot(t), "internal", "preview", "testdata")
	ks := filepath.Join(t.TempDir(), "ks.yaml")
	require.NoError(t, os.WriteFile(ks, []byte(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  sourceRef: {kind: OCIRepository, name: platform}
  postBuild:
    substitute: {bucket: inline-bucket, region: inline-wins}
    substituteFrom:
      - {kind: ConfigMap, name: cluster-vars}
      - {kind: Secret, name: cluster-secrets}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated}
`), 0o644))
	args := []string{"preview", "apps", "--path", filepath.Join(testdata, "plain"), "--kustomization-file", ks, "--vars-from", filepath.Join(testdata, "vars.yaml")}
	stdout, stderr, code := run(t, append(args, "--show-secrets")...)
	require.Equal(t, cli.ExitOK, code, "stderr:\n%s", stderr)
	want, err := os.ReadFile(filepath.Join(testdata, "inline-and-from.golden"))
	require.NoError(t, err)
	assert.Equal(t, string(want), stdout)

	// Without --show-secrets the value from the Secret is redacted.
	stdout, stderr, code = run(t, args...)
	require.Equal(t, cli.ExitOK, code, "stderr:\n%s", stderr)
	assert.NotContains(t, stdout+stderr, "hunter2")
	assert.Contains(t, stdout, "secret_ref: "+substitute.Redacted)
}
