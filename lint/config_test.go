package lint_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), lint.ConfigFile)
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	return file
}

const configHead = "apiVersion: fluxpack.dev/v1alpha1\nkind: LintConfig\nspec:\n"

// A suppression with a reason accepts the finding it names, which the
// report keeps with its reason; once it has expired the finding fails lint
// again, saying so. A rule turned off reports nothing; one made a hint
// does not fail.
func TestConfigSuppressesWithReason(t *testing.T) {
	racy := stack().Layer("namespaces", layering.Path("./namespaces")).Layer("apps", layering.Path("./apps"))
	dir := t.TempDir()
	writeTree(t, dir, lintTree)
	run := func(t *testing.T, spec string) *lint.Report {
		t.Helper()
		c, err := lint.LoadConfig(writeConfig(t, configHead+spec))
		require.NoError(t, err)
		opts, err := c.Options()
		require.NoError(t, err)
		rep, err := lint.Stack(t.Context(), racy, dir, opts...)
		require.NoError(t, err)
		return rep
	}

	rep := run(t, "  suppress:\n    - rule: namespace-order\n      layer: apps\n      reason: Terraform makes the namespace\n")
	assert.Zero(t, rep.Failing(), "%v", rep.Findings)
	require.Len(t, rep.Suppressed, 1)
	assert.Equal(t, "Terraform makes the namespace", rep.Suppressed[0].Reason)
	assert.Equal(t, lint.RuleNamespaceOrder, rep.Suppressed[0].Rule)
	assert.Contains(t, rep.Summary(), "1 suppressed")

	rep = run(t, "  suppress:\n    - rule: namespace-order\n      layer: other\n      reason: not this layer\n")
	assert.Equal(t, 1, rep.Failing(), "a suppression of another layer")

	yesterday := time.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	rep = run(t, "  suppress:\n    - rule: namespace-order\n      reason: until the namespace moves\n      expires: "+yesterday+"\n")
	require.Equal(t, 1, rep.Failing())
	assert.Contains(t, rep.Findings[0].Message, "expired on "+yesterday)

	assert.Empty(t, run(t, "  rules: {namespace-order: \"off\"}\n").Findings)
	rep = run(t, "  rules: {namespace-order: hint}\n")
	assert.Zero(t, rep.Failing())
	assert.Len(t, rep.Findings, 1)

	rep = run(t, "  existing: {namespaces: [apps]}\n")
	assert.Empty(t, rep.Findings, "what exists before Flux")
}

// A configuration lint cannot use is an error naming the file and line.
func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"kind", "apiVersion: v1\nkind: ConfigMap\n", ":1: want apiVersion fluxpack.dev/v1alpha1, kind LintConfig"},
		{"unknown field", configHead + "  existng: {namespaces: [a]}\n", "field existng not found"},
		{"unknown rule", configHead + "  rules: {crd-ordr: off}\n", `unknown rule "crd-ordr"`},
		{"severity", configHead + "  rules: {crd-order: fatal}\n", `want error, warning, hint or off, not "fatal"`},
		{"no reason", configHead + "  external: []\n  suppress:\n    - rule: crd-order\n", ":6: suppress crd-order: a reason is required"},
		{"bad date", configHead + "  suppress:\n    - rule: crd-order\n      reason: r\n      expires: soon\n", `:5: suppress crd-order: expires "soon": want YYYY-MM-DD`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lint.LoadConfig(writeConfig(t, tt.text))
			require.ErrorIs(t, err, lint.ErrInvalidOption)
			assert.ErrorContains(t, err, lint.ConfigFile)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// noRemoteBases in the configuration lints for a kustomize-controller run
// with --no-remote-bases: the remote resource is then a finding.
func TestConfigNoRemoteBases(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"remote/kustomization.yaml": "resources: [\"https://example.com/x.yaml\"]\n",
		lint.ConfigFile:             "apiVersion: fluxpack.dev/v1alpha1\nkind: LintConfig\nspec:\n  noRemoteBases: true\n",
	})
	cfg, err := lint.LoadConfig(filepath.Join(dir, lint.ConfigFile))
	require.NoError(t, err)
	opts, err := cfg.Options()
	require.NoError(t, err)
	rep, err := lint.Stack(t.Context(), stack().Layer("remote", layering.Path("./remote")), dir, opts...)
	require.NoError(t, err)
	require.Equal(t, []lint.Rule{lint.RulePath}, rules(failing(rep)))
}
