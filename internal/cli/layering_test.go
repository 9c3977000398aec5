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
)

func TestLayeringCommands(t *testing.T) {
	root := testutil.RepoRoot(t)
	examples := filepath.Join(root, "examples")
	bad := filepath.Join(root, "stackfile", "testdata", "stacks")
	es := filepath.Join(examples, "external-secrets", "platform")
	s3 := filepath.Join(examples, "platform-hierarchy", "platform", "stack.yaml")
	demo := filepath.Join(examples, "demo", "platform", "stack.yaml")
	out := t.TempDir()

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring stderr must hold
		noDir  string // a directory that must not exist afterwards
	}{
		{name: "render", args: []string{"render", "-f", filepath.Join(es, "stack.yaml"), "-d", filepath.Join(out, "es")}, stderr: "rendered"},
		{name: "render-cycle", args: []string{"render", "-f", filepath.Join(bad, "cycle.yaml"), "-d", filepath.Join(out, "cycle")}, code: cli.ExitError, stderr: "dependency cycle crds -> crs -> operator -> crds", noDir: filepath.Join(out, "cycle")},
		{name: "render-unknown-field", args: []string{"render", "-f", filepath.Join(bad, "unknown-field.yaml"), "-d", filepath.Join(out, "uf")}, code: cli.ExitError, stderr: `unknown-field.yaml:8: unknown field "pruen"`, noDir: filepath.Join(out, "uf")},
		{name: "render-bad-name", args: []string{"render", "-f", filepath.Join(bad, "bad-name.yaml"), "-d", filepath.Join(out, "bn")}, code: cli.ExitError, stderr: `layer "CRDs": name must match`, noDir: filepath.Join(out, "bn")},
		{name: "render-missing-path", args: []string{"render", "-f", filepath.Join(bad, "missing-path.yaml"), "-d", filepath.Join(out, "mp")}, code: cli.ExitError, stderr: `layer "operator": path "./operator" is not a directory`, noDir: filepath.Join(out, "mp")},
		{name: "render-vars", args: []string{"render", "-f", demo, "-d", filepath.Join(out, "demo"), "--secret-file", filepath.Join(out, "demo-secret.yaml")}, stderr: "rendered"},
		{name: "render-vars-left-out", args: []string{"render", "-f", demo, "-d", filepath.Join(out, "demo2")}, stderr: "sensitive outputs left out: give --secret-file to write their Secret\" outputs=db_password"},
		{name: "render-missing-outputs", args: []string{"render", "-f", demo, "-d", filepath.Join(out, "mo"), "--outputs", filepath.Join(out, "nope.json")}, code: cli.ExitError, stderr: `rendering vars "cluster-vars"`, noDir: filepath.Join(out, "mo")},
		{name: "render-no-output", args: []string{"render", "-f", filepath.Join(es, "stack.yaml")}, code: cli.ExitError, stderr: `required flag(s) "output-dir" not set`},
		{name: "lint-clean", args: []string{"lint", "-f", filepath.Join(es, "stack.yaml")}},
		{name: "lint-naive", args: []string{"lint", "-f", filepath.Join(es, "naive.yaml")}, code: cli.ExitFinding, stderr: "2 findings in 4 layers"},
		{name: "lint-naive-json", args: []string{"lint", "-f", filepath.Join(es, "naive.yaml"), "-o", "json"}, code: cli.ExitFinding},
		{name: "lint-s3-clean", args: []string{"lint", "-f", s3}},
		{name: "lint-s3-naive", args: []string{"lint", "-f", filepath.Join(filepath.Dir(s3), "naive.yaml")}, code: cli.ExitFinding, stderr: "findings in"},
		{name: "lint-cycle", args: []string{"lint", "-f", filepath.Join(bad, "cycle.yaml")}, code: cli.ExitFinding},
		{name: "lint-unknown-field", args: []string{"lint", "-f", filepath.Join(bad, "unknown-field.yaml")}, code: cli.ExitError, stderr: "invalid stack file"},
		{name: "lint-missing-file", args: []string{"lint", "-f", filepath.Join(bad, "nope.yaml")}, code: cli.ExitError, stderr: "no such file or directory"},
		{name: "graph-tree", args: []string{"graph", "-f", s3}},
		{name: "graph-mermaid", args: []string{"graph", "-f", s3, "-o", "mermaid"}},
		{name: "graph-dot", args: []string{"graph", "-f", s3, "-o", "dot"}},
		{name: "graph-bad-format", args: []string{"graph", "-f", s3, "-o", "png"}, code: cli.ExitError, stderr: `invalid -o/--output "png": want mermaid, dot, tree, json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			assert.Equal(t, tt.code, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(tt.args, " "), stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			if tt.noDir != "" {
				_, err := os.Stat(tt.noDir)
				assert.ErrorIs(t, err, os.ErrNotExist, "a bad stack wrote %s", tt.noDir)
			}
			got := stdout
			if code != cli.ExitOK {
				got += "--- stderr ---\n" + stderr
			}
			got = strings.NewReplacer(root, "ROOT", out, "OUT").Replace(got)
			testutil.Golden(t, "layering/"+tt.name, []byte(got))
		})
	}
	// render wrote the example's manifests.
	files := testutil.ReadFiles(t, filepath.Join(out, "es"))
	require.Contains(t, files, "layers/external-secrets-crs.yaml")
	assert.Contains(t, files["layers/external-secrets-crs.yaml"], "name: external-secrets-operator")
	// render wrote the vars ConfigMap into the directory, the Secret only to
	// --secret-file.
	files = testutil.ReadFiles(t, filepath.Join(out, "demo"))
	assert.Contains(t, files["vars/configmap-cluster-vars.yaml"], "assets_bucket: acme-prod-assets")
	secret := testutil.ReadFiles(t, out)["demo-secret.yaml"]
	assert.Contains(t, secret, "db_password: ")
	for name, data := range files {
		assert.NotContains(t, data, "db_password", "%s", name)
	}
}
