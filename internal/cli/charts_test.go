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

// TestLintChartsOnline lints package fluxrepo's helm-operators repository
// (the naive cluster: the stores race the operator's webhook) with the
// operator's chart moved to an OCI registry, as helm push writes it: lint
// sees the webhook inside the chart only with --charts online.
func TestLintChartsOnline(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where --charts online pulls the charts
	reg := testutil.NewRegistry(t)
	testutil.PushChart(t, testutil.TestChart(t), reg.Host+"/charts/secrets-operator:0.3.1")

	files := testutil.ReadFiles(t, filepath.Join(testutil.RepoRoot(t), "fluxrepo", "testdata", "repos", "helm-operators"))
	for f := range files {
		if strings.HasPrefix(f, "charts/") || strings.HasPrefix(f, "clusters/fixed/") {
			delete(files, f)
		}
	}
	files["infrastructure/operator/source.yaml"] = `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: secrets-operator, namespace: flux-system}
spec:
  interval: 10m
  url: oci://` + reg.Host + `/charts/secrets-operator
  ref: {tag: 0.3.1}
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
`
	release := strings.Replace(files["infrastructure/operator/release.yaml"], `  chart:
    spec:
      chart: ./charts/secrets-operator
      sourceRef:
        kind: GitRepository
        name: flux-system
`, "  chartRef: {kind: OCIRepository, name: secrets-operator}\n", 1)
	require.Contains(t, release, "chartRef")
	files["infrastructure/operator/release.yaml"] = release
	root := t.TempDir()
	testutil.WriteFiles(t, root, files)
	entry := filepath.Join(root, "clusters", "naive")

	stdout, stderr, code := run(t, "lint", entry, "--root", root)
	assert.Equal(t, 0, code, "lint offline: the chart of an unknown operator is not assumed to serve a webhook; stdout %s, stderr %s", stdout, stderr)

	stdout, stderr, code = run(t, "lint", entry, "--root", root, "--charts", "online", "--insecure-registry")
	require.Equal(t, cli.ExitFinding, code, "lint --charts online; stdout %s, stderr %s", stdout, stderr)
	assert.Contains(t, stdout, "[webhook-order]")
	assert.Contains(t, stdout, `operator layer "operator" serves the admission webhook of external-secrets.io`)
	assert.NotContains(t, stdout, "assumed")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the pulled charts are removed")

	// A registry without the chart: the chart is unavailable, not an error.
	files["infrastructure/operator/source.yaml"] = strings.Replace(files["infrastructure/operator/source.yaml"], "tag: 0.3.1", "tag: 9.9.9", 1)
	testutil.WriteFiles(t, root, files)
	stdout, stderr, code = run(t, "lint", entry, "--root", root, "--charts", "online", "--insecure-registry")
	assert.Equal(t, 0, code, "lint --charts online of a missing tag; stdout %s, stderr %s", stdout, stderr)

	// preview of the HelmRelease pulls the chart too.
	files["infrastructure/operator/source.yaml"] = strings.Replace(files["infrastructure/operator/source.yaml"], "tag: 9.9.9", "tag: 0.3.1", 1)
	testutil.WriteFiles(t, root, files)
	stdout, stderr, code = run(t, "preview", "--cluster", entry, "--root", root, "HelmRelease/external-secrets", "--charts", "online", "--insecure-registry")
	require.Equal(t, 0, code, "preview --charts online; stderr %s", stderr)
	assert.Contains(t, stdout, "kind: ValidatingWebhookConfiguration")
}
