package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
	"github.com/fluxpack/fluxpack/stackfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// Bad stacks give named errors and write nothing.
func TestRenderFileBadStacks(t *testing.T) {
	tests := []struct {
		file string
		kind error
		want []string
	}{
		{"cycle.yaml", layering.ErrCycle, []string{`testdata/stacks/cycle.yaml:7: layer "crds": dependency cycle crds -> crs -> operator -> crds`}},
		{"unknown-field.yaml", stackfile.ErrInvalid, []string{`testdata/stacks/unknown-field.yaml:8: unknown field "pruen" in spec.layers[0]`}},
		{"bad-name.yaml", layering.ErrInvalidName, []string{
			`testdata/stacks/bad-name.yaml:7: layer "CRDs": name must match`,
			`testdata/stacks/bad-name.yaml:8: layer "crds_2": name must match`,
		}},
		{"missing-path.yaml", layering.ErrMissingPath, []string{
			`testdata/stacks/missing-path.yaml:8: layer "operator": path "./operator" is not a directory under testdata/stacks`,
			`testdata/stacks/missing-path.yaml:9: layer "crs": path "./crs" is not a directory under testdata/stacks`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := render.StackFile(t.Context(), filepath.Join("testdata", "stacks", tt.file), out)
			require.ErrorIs(t, err, tt.kind, "StackFile(%s)", tt.file)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			_, statErr := os.Stat(out)
			assert.ErrorIs(t, statErr, os.ErrNotExist, "a bad stack wrote %s", out)
			entries, _ := os.ReadDir(filepath.Dir(out))
			assert.Empty(t, entries, "no temporary directory left")
		})
	}
}

func TestRenderFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, err := render.StackFile(t.Context(), "testdata/stacks/external-secrets.yaml", out)
	require.Error(t, err, "its layer paths do not exist next to it")
	require.Nil(t, r)

	stackDir := renderableStack(t)
	r, err = render.StackFile(t.Context(), filepath.Join(stackDir, "stack.yaml"), out)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(out, "layers", "crs.yaml"))
	require.NoError(t, err)
	files, err := r.Plan.Files()
	require.NoError(t, err)
	assert.Equal(t, string(files[4].Data), string(got))
	assert.Equal(t, []string{"kustomization.yaml", "source.yaml", "layers/crds.yaml", "layers/operator.yaml", "layers/crs.yaml", "vars/configmap-cluster-vars.yaml"}, r.Files)
	assert.Equal(t, []string{"db_password"}, r.LeftOut, "without a secret file the sensitive outputs are left out")
	assert.Empty(t, r.SecretFile)
	written := testutil.ReadFiles(t, out)
	testutil.Golden(t, "render-vars", []byte(written["kustomization.yaml"]+"---\n"+written["vars/configmap-cluster-vars.yaml"]))
	for name, data := range written {
		assert.NotContains(t, data, "hunter2", "the sensitive value reached %s", name)
	}
}

func TestRenderFileSecret(t *testing.T) {
	stackDir := renderableStack(t)
	out := filepath.Join(t.TempDir(), "out")
	secret := filepath.Join(t.TempDir(), "secrets", "cluster-vars.yaml")
	r, err := render.StackFile(t.Context(), filepath.Join(stackDir, "stack.yaml"), out, render.WithSecretFile(secret))
	require.NoError(t, err)
	assert.Equal(t, secret, r.SecretFile)
	assert.Empty(t, r.LeftOut)
	fi, err := os.Stat(secret)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	data, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Contains(t, string(data), "kind: Secret\n")
	assert.Contains(t, string(data), "db_password: aHVudGVyMg==", "base64 of the sensitive output")
	assert.NotContains(t, testutil.ReadFiles(t, out)["vars/configmap-cluster-vars.yaml"], "db_password")

	// WithOutputs reads another outputs file for the stack's one vars entry.
	other := filepath.Join(t.TempDir(), "prod.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"region": {"sensitive": false, "type": "string", "value": "us-east-1"}}`), 0o644))
	r, err = render.StackFile(t.Context(), filepath.Join(stackDir, "stack.yaml"), out, render.WithOutputs(other))
	require.NoError(t, err)
	assert.Empty(t, r.LeftOut)
	cm := testutil.ReadFiles(t, out)["vars/configmap-cluster-vars.yaml"]
	assert.Contains(t, cm, "region: us-east-1")
	assert.NotContains(t, cm, "eu-west-1")

	// A directory that cannot be replaced leaves no Secret behind either.
	foreign := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "mine.txt"), nil, 0o644))
	secrets := t.TempDir()
	_, err = render.StackFile(t.Context(), filepath.Join(stackDir, "stack.yaml"), foreign, render.WithSecretFile(filepath.Join(secrets, "s.yaml")))
	require.ErrorContains(t, err, "refusing to replace")
	entries, err := os.ReadDir(secrets)
	require.NoError(t, err)
	assert.Empty(t, entries, "the staged Secret was removed")
}

// Bad vars give named errors and write nothing, the Secret included.
func TestRenderFileBadVars(t *testing.T) {
	stackDir := renderableStack(t)
	tests := []struct {
		name string
		opts func(out string) []render.Option
		kind error
		want string
	}{
		{"missing-outputs", func(string) []render.Option {
			return []render.Option{render.WithOutputs(filepath.Join(stackDir, "nope.json"))}
		}, os.ErrNotExist, `rendering vars "cluster-vars": `},
		{"malformed-outputs", func(string) []render.Option {
			return []render.Option{render.WithOutputs(filepath.Join(stackDir, "crds", "bad.json"))}
		}, substitute.ErrMalformed, `bad.json`},
		{"secret-inside", func(out string) []render.Option {
			return []render.Option{render.WithSecretFile(filepath.Join(out, "vars", "secret.yaml"))}
		}, layering.ErrInvalidOption, "inside the rendered directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			_, err := render.StackFile(t.Context(), filepath.Join(stackDir, "stack.yaml"), out, tt.opts(out)...)
			require.ErrorIs(t, err, tt.kind)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "hunter2")
			entries, _ := os.ReadDir(parent)
			assert.Empty(t, entries, "nothing written")
		})
	}
}

// renderableStack copies testdata/stacks/external-secrets.yaml to a temporary
// directory with its layer paths and its IaC outputs, one of them sensitive.
func renderableStack(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/stacks/external-secrets.yaml")
	require.NoError(t, err)
	testutil.WriteFiles(t, dir, map[string]string{
		"stack.yaml":     string(data),
		"crds/bad.json":  "{not json",
		"operator/.keep": "",
		"crs/.keep":      "",
		"terraform.json": `{
  "region": {"sensitive": false, "type": "string", "value": "eu-west-1"},
  "vpc-id": {"sensitive": false, "type": "string", "value": "vpc-0a1b"},
  "db_password": {"sensitive": true, "type": "string", "value": "hunter2"}
}`,
	})
	return dir
}

// A layer reading another source than the stack's (another Git
// repository) is not looked for in the stack's folder; the stack's own
// layers still are. suspend: true reaches spec.suspend.
func TestRenderFileOtherSourcePaths(t *testing.T) {
	dir := t.TempDir()
	stack := `apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata:
  name: platform
spec:
  sourceRef: {kind: GitRepository, name: flux-system}
  layers:
    - name: infra
      path: ./infra
    - name: crds
      path: ./cmd/k8s-operator/deploy/crds
      sourceRef: {kind: GitRepository, name: tailscale}
    - name: same-source
      path: ./nowhere
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
    - name: opt-in
      path: ./infra
      suspend: true
`
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "infra"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(stack), 0o644))
	_, err := render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), filepath.Join(t.TempDir(), "out"))
	require.ErrorIs(t, err, layering.ErrMissingPath)
	assert.ErrorContains(t, err, `layer "same-source": path "./nowhere" is not a directory`)
	assert.NotContains(t, err.Error(), `layer "crds"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(strings.Replace(stack, "./nowhere", "./infra", 1)), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	r, err := render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), out)
	require.NoError(t, err)
	for _, l := range r.Plan.Layers {
		assert.Equal(t, l.Name == "opt-in", l.Kustomization.Spec.Suspend, "layer %s: spec.suspend", l.Name)
	}
	data, err := os.ReadFile(filepath.Join(out, "layers", "opt-in.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "suspend: true")
}
