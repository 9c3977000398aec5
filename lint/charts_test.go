package lint_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// charts holds fluxbuild's test chart, secrets-operator: the External
// Secrets CRDs in crds/, a Deployment and a validating webhook for
// external-secrets.io in templates/.
var charts = filepath.Join("..", "fluxbuild", "testdata", "charts")

// chartTree is seed 000/002's platform with the operator installed from
// its chart, the seed's way: a HelmRelease whose chart comes from an
// OCIRepository.
func chartTree(chartURL, crds string) map[string]string {
	return map[string]string{
		"namespaces/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: external-secrets}\n",
		"crds/crd.yaml":      crdYAML,
		"operator/source.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: secrets-operator, namespace: flux-system}
spec:
  interval: 10m
  url: ` + chartURL + `
  ref: {tag: 0.3.1}
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
`,
		"operator/release.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: secrets-operator, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: external-secrets
  chartRef: {kind: OCIRepository, name: secrets-operator}
  install: {crds: ` + crds + `}
  valuesFrom: [{kind: ConfigMap, name: operator-values}]
`,
		"operator/values.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: operator-values, namespace: flux-system}\ndata:\n  values.yaml: |\n    replicaCount: 2\n",
		"crs/store.yaml":       crYAML,
	}
}

// The webhook race of seed 000, where people meet it: the operator is a
// HelmRelease, and its webhook is inside the chart.
func TestLintSeesIntoCharts(t *testing.T) {
	naive := func() *layering.Builder {
		return stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Layer("operator", layering.Path("./operator"), layering.DependsOn("namespaces"), layering.Wait()).
			Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	}
	fluxpack := func() *layering.Builder {
		return stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Then("operator", layering.Path("./operator"), layering.Wait()).
			Then("crs", layering.Path("./crs"))
	}
	lintWith := func(t *testing.T, b *layering.Builder, files map[string]string, opts ...lint.Option) []lint.Finding {
		t.Helper()
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), b, dir, opts...)
		require.NoError(t, err)
		return failing(rep)
	}

	t.Run("webhook inside the chart", func(t *testing.T) {
		fs := lintWith(t, naive(), chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"), lint.WithCharts(charts))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "lint of seed 002's naive layout with the chart: %v", fs)
		assert.Equal(t, "crs", fs[0].Layer)
		assert.Equal(t, "ClusterSecretStore/vault", fs[0].Object)
		assert.Contains(t, fs[0].Message, `operator layer "operator" serves the admission webhook of external-secrets.io`)
		assert.NotContains(t, fs[0].Message, "assumed")

		// Without the chart, lint cannot know the operator serves a
		// webhook: a chart it does not know is not assumed to.
		fs = lintWith(t, naive(), chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"))
		assert.Empty(t, fs, "lint of the naive layout without the chart of an unknown operator")

		fs = lintWith(t, fluxpack(), chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"), lint.WithCharts(charts))
		assert.Empty(t, fs, "lint of fluxpack's layout with the chart")
	})

	t.Run("known operator assumed", func(t *testing.T) {
		fs := lintWith(t, naive(), chartTree("oci://ghcr.io/external-secrets/charts/external-secrets", "Skip"))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "lint of the naive layout of a known operator, no chart: %v", fs)
		assert.Contains(t, fs[0].Message, "assumed from fluxpack's table of known operators, as lint could not render the chart of HelmRelease/flux-system/secrets-operator")

		fs = lintWith(t, naive(), chartTree("oci://registry.example.com/charts/in-house", "Skip"),
			lint.WithOperators(map[string][]string{"in-house": {"external-secrets.io"}}))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "WithOperators extends the table: %v", fs)
	})

	t.Run("CRDs inside the chart", func(t *testing.T) {
		files := chartTree("oci://registry.example.com/charts/secrets-operator", "CreateReplace")
		delete(files, "crds/crd.yaml")
		b := stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("operator", layering.Path("./operator"), layering.Wait()).
			Layer("crs", layering.Path("./crs"), layering.DependsOn("namespaces"))
		fs := lintWith(t, b, files, lint.WithCharts(charts))
		require.Contains(t, rules(fs), lint.RuleCRDOrder, "%v", fs)
		for _, f := range fs {
			if f.Rule == lint.RuleCRDOrder {
				assert.Contains(t, f.Message, `the CRD of ClusterSecretStore (external-secrets.io) is in layer "operator", which this layer does not depend on`)
			}
		}
		b = stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("operator", layering.Path("./operator"), layering.Wait()).
			Then("crs", layering.Path("./crs"))
		assert.Empty(t, lintWith(t, b, files, lint.WithCharts(charts)), "the CRs behind the chart that brings their CRDs")
	})

	// A custom resource beside the HelmRelease whose chart brings its CRD
	// holds the layer up for good; when another layer, not an ancestor,
	// brings the CRD too, that layer may come first: a race, not a
	// deadlock.
	t.Run("CRDs of the chart in the same layer", func(t *testing.T) {
		files := chartTree("oci://registry.example.com/charts/secrets-operator", "CreateReplace")
		files["operator/store.yaml"] = crYAML
		alone := stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("operator", layering.Path("./operator"))
		fs := lintWith(t, alone, files, lint.WithCharts(charts))
		require.Equal(t, []lint.Rule{lint.RuleHelmCRDs}, rules(fs), "%v", fs)
		assert.Contains(t, fs[0].Message, "a deadlock, not a race")

		elsewhere := stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("operator", layering.Path("./operator")).
			Layer("crds", layering.Path("./crds"), layering.KeepOnDelete())
		fs = lintWith(t, elsewhere, files, lint.WithCharts(charts))
		require.Equal(t, []lint.Rule{lint.RuleCRDOrder}, rules(fs), "%v", fs)
		assert.Contains(t, fs[0].Message, `is in layer "crds", which this layer does not depend on; HelmRelease/flux-system/secrets-operator of this layer installs it too, but only once the layer is applied`)
		assert.NotContains(t, fs[0].Message, "deadlock")
	})

	t.Run("health check on an object of the chart", func(t *testing.T) {
		b := stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Then("operator", layering.Path("./operator"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "external-secrets-secrets-operator", Namespace: "external-secrets"})).
			Then("crs", layering.Path("./crs"))
		assert.Empty(t, lintWith(t, b, chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"), lint.WithCharts(charts)))
		// The release is named targetNamespace-name, and so is the chart's
		// Deployment: a check on the HelmRelease's own name waits for nothing.
		b = stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Then("operator", layering.Path("./operator"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "secrets-operator", Namespace: "external-secrets"})).
			Then("crs", layering.Path("./crs"))
		fs := lintWith(t, b, chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"), lint.WithCharts(charts))
		require.Equal(t, []lint.Rule{lint.RuleHealthCheck}, rules(fs), "%v", fs)
	})

	// The values the chart is rendered with come from valuesFrom, read as
	// the API server stores the object: with the webhook turned off there,
	// the naive layout has no race. Lint keeps the values of a plain
	// ConfigMap or Secret, not its node; one with anything else is decoded
	// from its node.
	t.Run("values from a ConfigMap or Secret", func(t *testing.T) {
		const off = "webhook: {enabled: false}\n"
		for _, tc := range []struct {
			name, kind, values string
			want               []lint.Rule
		}{
			{"ConfigMap data", "ConfigMap", "data:\n  values.yaml: |\n    " + off, nil},
			{"ConfigMap data, webhook on", "ConfigMap", "data:\n  values.yaml: |\n    webhook: {enabled: true}\n", []lint.Rule{lint.RuleWebhookOrder}},
			{"Secret data", "Secret", "data:\n  values.yaml: " + base64.StdEncoding.EncodeToString([]byte(off)) + "\n", nil},
			{"Secret stringData", "Secret", "stringData:\n  values.yaml: |\n    " + off, nil},
			// The API server refuses it: the chart has no values from it.
			{"Secret data that is not base64", "Secret", "data:\n  values.yaml: '" + off + "'\n", []lint.Rule{lint.RuleChart}},
			{"ConfigMap with a quoted number", "ConfigMap", "data:\n  values.yaml: |\n    " + off + "  other: \"1\"\n", nil},
			// The API server's decoder makes a string of a number.
			{"ConfigMap with a number", "ConfigMap", "data:\n  values.yaml: |\n    " + off + "  other: 1\n", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				files := chartTree("oci://registry.example.com/charts/secrets-operator", "Skip")
				files["operator/release.yaml"] = strings.Replace(files["operator/release.yaml"], "kind: ConfigMap", "kind: "+tc.kind, 1)
				files["operator/values.yaml"] = "apiVersion: v1\nkind: " + tc.kind + "\nmetadata: {name: operator-values, namespace: flux-system}\n" + tc.values
				fs := lintWith(t, naive(), files, lint.WithCharts(charts))
				assert.Equal(t, tc.want, rules(fs), "%v", fs)
			})
		}
	})

	t.Run("chart that does not render", func(t *testing.T) {
		files := chartTree("oci://registry.example.com/charts/secrets-operator", "Skip")
		files["operator/values.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: operator-values, namespace: flux-system}\ndata:\n  values.yaml: |\n    image: not-a-map\n"
		fs := lintWith(t, fluxpack(), files, lint.WithCharts(charts))
		require.Equal(t, []lint.Rule{lint.RuleChart}, rules(fs), "%v", fs)
		assert.Equal(t, "HelmRelease/flux-system/secrets-operator", fs[0].Object)
		assert.Contains(t, fs[0].Message, "can't evaluate field repository")
		assert.Equal(t, "operator/release.yaml", filepath.ToSlash(fs[0].File))

		// The chart was there: no layer "needs charts" for it.
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), fluxpack(), dir, lint.WithCharts(charts))
		require.NoError(t, err)
		for _, c := range rep.Coverage {
			assert.NotEqual(t, lint.CoverageChart, c.Cause, "%+v", c)
		}
	})
}

// A health check on what a chart lint cannot render may be right: it is
// no finding, as for objects of a source lint cannot read.
func TestLintHealthCheckUnseenChart(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, chartTree("oci://registry.example.com/charts/secrets-operator", "Skip"))
	b := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
		Then("operator", layering.Path("./operator"), layering.HealthChecks(
			meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "anything", Namespace: "external-secrets"}))
	rep, err := lint.Stack(t.Context(), b, dir)
	require.NoError(t, err)
	assert.Empty(t, failing(rep))
	rep, err = lint.Stack(t.Context(), b, dir, lint.WithCharts(charts))
	require.NoError(t, err)
	assert.Equal(t, []lint.Rule{lint.RuleHealthCheck}, rules(failing(rep)), "with the chart, lint sees no Deployment/external-secrets/anything")
}

// fakeFetcher serves the charts of the charts folder by the last element
// of their URL, or fails with err; it records what it was asked.
type fakeFetcher struct {
	err   error
	mu    sync.Mutex
	asked []string
}

func (f *fakeFetcher) FetchChart(_ context.Context, url, tag string) (string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, url+":"+tag)
	f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	return filepath.Join(charts, url[strings.LastIndex(url, "/")+1:]), nil
}

// With a chart fetcher, lint renders the OCI charts no folder holds: the
// webhook inside the chart is seen, as with --charts.
func TestLintFetchesCharts(t *testing.T) {
	naive := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
		Layer("operator", layering.Path("./operator"), layering.DependsOn("namespaces"), layering.Wait()).
		Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	lintTree := func(t *testing.T, files map[string]string, opts ...lint.Option) []lint.Finding {
		t.Helper()
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), naive, dir, opts...)
		require.NoError(t, err)
		return failing(rep)
	}
	const url = "oci://registry.example.com/charts/secrets-operator"

	t.Run("chartRef to an OCIRepository", func(t *testing.T) {
		assert.Empty(t, lintTree(t, chartTree(url, "Skip")), "lint without fetcher or chart of an unknown operator")
		f := &fakeFetcher{}
		fs := lintTree(t, chartTree(url, "Skip"), lint.WithChartFetcher(f))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "lint with a fetcher: %v", fs)
		assert.Contains(t, fs[0].Message, `operator layer "operator" serves the admission webhook of external-secrets.io`)
		assert.NotContains(t, fs[0].Message, "assumed")
		assert.Equal(t, []string{url + ":0.3.1"}, f.asked)
	})

	t.Run("charts folder first", func(t *testing.T) {
		f := &fakeFetcher{}
		fs := lintTree(t, chartTree(url, "Skip"), lint.WithCharts(charts), lint.WithChartFetcher(f))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
		assert.Empty(t, f.asked, "the fetcher asked for a chart of the charts folders")
	})

	t.Run("spec.chart of an OCI HelmRepository", func(t *testing.T) {
		files := chartTree(url, "Skip")
		files["operator/source.yaml"] = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {type: oci, interval: 10m, url: "oci://registry.example.com/charts"}
`
		release := func(version string) string {
			return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: secrets-operator, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: external-secrets
  chart:
    spec: {chart: secrets-operator, version: "` + version + `", sourceRef: {kind: HelmRepository, name: charts}}
`
		}
		files["operator/release.yaml"] = release("0.3.1")
		f := &fakeFetcher{}
		fs := lintTree(t, files, lint.WithChartFetcher(f))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
		assert.Equal(t, []string{url + ":0.3.1"}, f.asked)

		// A range is source-controller's to resolve: nothing is fetched.
		files["operator/release.yaml"] = release("0.3.x")
		f = &fakeFetcher{}
		assert.Empty(t, lintTree(t, files, lint.WithChartFetcher(f)))
		assert.Empty(t, f.asked, "the fetcher asked for a version range")
	})

	t.Run("fetch error", func(t *testing.T) {
		boom := errors.New("pulling chart oci://registry.example.com/charts/secrets-operator:0.3.1: connection refused")
		f := &fakeFetcher{err: boom}
		assert.Empty(t, lintTree(t, chartTree(url, "Skip"), lint.WithChartFetcher(f)), "a chart that cannot be fetched is no finding")
		assert.NotEmpty(t, f.asked)

		// A known operator is assumed, and the finding says why.
		known := "oci://ghcr.io/external-secrets/charts/external-secrets"
		fs := lintTree(t, chartTree(known, "Skip"), lint.WithChartFetcher(&fakeFetcher{err: boom}))
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
		assert.Contains(t, fs[0].Message, "assumed from fluxpack's table of known operators")
		assert.Contains(t, fs[0].Message, boom.Error())
	})

	t.Run("nil fetcher", func(t *testing.T) {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, chartTree(url, "Skip"))
		_, err := lint.Stack(t.Context(), naive, dir, lint.WithChartFetcher(nil))
		require.ErrorIs(t, err, layering.ErrInvalidOption)
	})
}

// A webhook configuration the layer applies outweighs the table: the
// finding is not "assumed" when the layer says for certain.
func TestLintAssumedOnlyWithoutWebhook(t *testing.T) {
	dir := t.TempDir()
	files := chartTree("oci://ghcr.io/external-secrets/charts/external-secrets", "Skip")
	files["operator/webhook.yaml"] = webhookYAML
	testutil.WriteFiles(t, dir, files)
	b := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
		Layer("operator", layering.Path("./operator"), layering.DependsOn("namespaces"), layering.Wait()).
		Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	rep, err := lint.Stack(t.Context(), b, dir)
	require.NoError(t, err)
	fs := failing(rep)
	require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
	assert.NotContains(t, fs[0].Message, "assumed")
}

// fakeResolver is a charts.Resolver too: it serves the charts folder's
// charts for any version in the range "0.3.x", says other versions do not
// exist, or fails with err; it records what it was asked.
type fakeResolver struct {
	fakeFetcher
}

type notFoundError string

func (e notFoundError) Error() string  { return string(e) }
func (e notFoundError) NotFound() bool { return true }

func (f *fakeResolver) ResolveChart(_ context.Context, repoURL, chart, version string) (string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, repoURL+" "+chart+" "+version)
	f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	if version != "0.3.x" && version != "0.3.1" {
		return "", notFoundError(fmt.Sprintf("no 'secrets-operator' chart with version matching '%s' found", version))
	}
	return filepath.Join(charts, "secrets-operator"), nil
}

// With a ChartResolver (--sources online), lint renders the charts of HTTP
// Helm repositories and version ranges; a range nothing matches is a
// `chart` finding, as helm-controller fails; an unreachable repository
// is not.
func TestLintResolvesCharts(t *testing.T) {
	naive := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
		Layer("operator", layering.Path("./operator"), layering.DependsOn("namespaces"), layering.Wait()).
		Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	files := chartTree("oci://registry.example.com/charts/secrets-operator", "Skip")
	files["operator/source.yaml"] = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {interval: 10m, url: "https://charts.example.com/stable"}
`
	lintWith := func(t *testing.T, version string, f interface {
		FetchChart(ctx context.Context, url, tag string) (string, error)
	}) []lint.Finding {
		t.Helper()
		files["operator/release.yaml"] = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: secrets-operator, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: external-secrets
  chart:
    spec: {chart: secrets-operator, version: "` + version + `", sourceRef: {kind: HelmRepository, name: charts}}
`
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), naive, dir, lint.WithChartFetcher(f))
		require.NoError(t, err)
		return failing(rep)
	}
	t.Run("a range of an HTTP repository", func(t *testing.T) {
		assert.Empty(t, lintWith(t, "0.3.x", &fakeFetcher{}), "a fetcher alone reads no HTTP repository")
		f := &fakeResolver{}
		fs := lintWith(t, "0.3.x", f)
		require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
		assert.Equal(t, []string{"https://charts.example.com/stable secrets-operator 0.3.x"}, f.asked)
	})
	t.Run("no version matches", func(t *testing.T) {
		fs := lintWith(t, ">=9.0.0", &fakeResolver{})
		require.Equal(t, []lint.Rule{lint.RuleChart}, rules(fs), "%v", fs)
		assert.Contains(t, fs[0].Message, "no 'secrets-operator' chart with version matching '>=9.0.0' found")
	})
	t.Run("unreachable", func(t *testing.T) {
		f := &fakeResolver{fakeFetcher{err: errors.New("dial tcp: connection refused")}}
		assert.Empty(t, lintWith(t, "0.3.x", f), "a repository lint cannot reach is coverage, not a finding")
		assert.NotEmpty(t, f.asked)
		// Online already: the advice is not to go online.
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), naive, dir, lint.WithChartFetcher(f))
		require.NoError(t, err)
		require.NotEmpty(t, rep.Coverage)
		for _, c := range rep.Coverage {
			assert.NotContains(t, c.Advice, "--sources online", "%+v", c)
			assert.Contains(t, c.Advice, "could not be fetched")
		}
	})
}

// A health check on an object no layer lint read applies, while a chart
// lint could not render is in the platform (here in a layer this one does
// not depend on), may name an object of that chart: lint says, in
// Coverage, that it could not check the layer, and what would let it,
// rather than claim that no layer creates it. Given the chart, it decides:
// the object is the chart's (a race), or no one's.
func TestLintHealthCheckUndecidedWhereAChartMayMakeIt(t *testing.T) {
	dir := t.TempDir()
	files := chartTree("oci://registry.example.com/charts/secrets-operator", "Skip")
	files["apps/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: external-secrets}\n"
	testutil.WriteFiles(t, dir, files)
	checking := func(name string) *layering.Builder {
		return stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Then("operator", layering.Path("./operator"), layering.Wait()).
			Layer("apps", layering.Path("./apps"), layering.DependsOn("namespaces"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name, Namespace: "external-secrets"}))
	}
	healthChecks := func(rep *lint.Report) []lint.Finding {
		var out []lint.Finding
		for _, f := range failing(rep) {
			if f.Rule == lint.RuleHealthCheck {
				out = append(out, f)
			}
		}
		return out
	}

	rep, err := lint.Stack(t.Context(), checking("external-secrets-secrets-operator"), dir)
	require.NoError(t, err)
	assert.Empty(t, healthChecks(rep), "the object may be in the chart lint could not render")
	i := slices.IndexFunc(rep.Coverage, func(c lint.Coverage) bool { return c.Cause == lint.CoverageChart })
	require.GreaterOrEqual(t, i, 0, "Coverage says what was not checked: %+v", rep.Coverage)
	assert.Contains(t, rep.Coverage[i].Layers, "apps")
	assert.NotEmpty(t, rep.Coverage[i].Advice)

	rep, err = lint.Stack(t.Context(), checking("external-secrets-secrets-operator"), dir, lint.WithCharts(charts))
	require.NoError(t, err)
	if fs := healthChecks(rep); assert.Len(t, fs, 1) {
		assert.Contains(t, fs[0].Message, `created by layer "operator", which this layer does not depend on`)
	}
	rep, err = lint.Stack(t.Context(), checking("external-secrets-secrets-operater"), dir, lint.WithCharts(charts))
	require.NoError(t, err)
	if fs := healthChecks(rep); assert.Len(t, fs, 1) {
		assert.Contains(t, fs[0].Message, `health check Deployment/external-secrets/external-secrets-secrets-operater: no layer creates this object (did you mean "Deployment/external-secrets/external-secrets-secrets-operator"?)`)
	}
}

// A health check, or a HelmRelease's dependsOn, naming a Flux object no
// layer applies, beside one of a close name, is a typo even when the
// layer's chart is not rendered (charts are assumed to make no Flux
// objects, and the finding says so): Flux waits for it until the timeout
// and fails, and every dependent with it.
func TestLintFluxObjectTypo(t *testing.T) {
	dir := t.TempDir()
	files := chartTree("oci://registry.example.com/charts/secrets-operator", "Skip")
	files["apps/release.yaml"] = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app, namespace: flux-system}\nspec:\n  interval: 10m\n  chartRef: {kind: OCIRepository, name: secrets-operator}\n  dependsOn:\n    - name: secretsoperator\n"
	testutil.WriteFiles(t, dir, files)
	b := func(check string) *layering.Builder {
		return stack().Layer("namespaces", layering.Path("./namespaces")).
			Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
			Then("operator", layering.Path("./operator"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: check, Namespace: "flux-system"})).
			Then("apps", layering.Path("./apps"))
	}
	rep, err := lint.Stack(t.Context(), b("secretsoperator"), dir)
	require.NoError(t, err)
	var got []string
	for _, f := range failing(rep) {
		if f.Rule == lint.RuleHealthCheck || f.Rule == lint.RuleGraph {
			got = append(got, f.Layer+": "+f.Message)
		}
	}
	require.Len(t, got, 2, "%v", failing(rep))
	assert.Contains(t, got[0], `operator: health check HelmRelease/flux-system/secretsoperator: no layer creates this object (did you mean "HelmRelease/flux-system/secrets-operator"?) (charts lint did not render are assumed to make no Flux objects)`)
	assert.Contains(t, got[1], `apps: dependsOn HelmRelease/flux-system/secretsoperator: no layer applies this HelmRelease (did you mean "HelmRelease/flux-system/secrets-operator"?)`)

	// The near miss: the names are right.
	testutil.WriteFiles(t, dir, map[string]string{"apps/release.yaml": strings.Replace(files["apps/release.yaml"], "secretsoperator", "secrets-operator", 1)})
	rep, err = lint.Stack(t.Context(), b("secrets-operator"), dir)
	require.NoError(t, err)
	for _, f := range failing(rep) {
		assert.NotContains(t, []lint.Rule{lint.RuleHealthCheck, lint.RuleGraph}, f.Rule, "%s", f)
	}
}

// A chart lint could not render, before a layer, may bring the CRDs of
// its custom resources, unless the table of known operators places that
// group's CRDs in a chart of another layer, which the layer does not wait
// for: a backup operator's chart does not install ExternalSecret's CRDs.
// Then crd-order is as sure as webhook-order, which does not take that
// chart for the group's webhook server either (N1 of issue 40: the layer
// after the backup chart had webhook-order without crd-order). The layer
// stays among those the chart coverage names: what else the chart holds
// is unknown.
func TestLintUnrelatedChartBringsNoKnownCRDs(t *testing.T) {
	release := func(name string) string {
		return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec:\n  interval: 30m\n  chart: {spec: {chart: " + name + ", sourceRef: {kind: HelmRepository, name: upstream}}}\n"
	}
	secret := func(name string) string {
		return "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: " + name + ", namespace: default}\n" +
			"spec: {secretStoreRef: {kind: ClusterSecretStore, name: store}, target: {name: " + name + "}}\n"
	}
	files := map[string]string{
		"secrets/repo.yaml":   "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: upstream, namespace: flux-system}\nspec: {interval: 1h, url: https://charts.example.org}\n",
		"secrets/eso.yaml":    release("external-secrets"),
		"backup/backup.yaml":  release("snapshot-mover"),
		"after/secret.yaml":   secret("after-backup"),
		"alone/secret.yaml":   secret("alone"),
		"behind/secret.yaml":  secret("behind"),
		"behind2/secret.yaml": secret("behind-both"),
	}
	byLayer := func(fs []lint.Finding) map[string][]lint.Rule {
		out := map[string][]lint.Rule{}
		for _, f := range fs {
			out[f.Layer] = append(out[f.Layer], f.Rule)
		}
		return out
	}
	lintReport := func(t *testing.T, b *layering.Builder) *lint.Report {
		t.Helper()
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), b, dir)
		require.NoError(t, err)
		return rep
	}

	b := stack().Layer("secrets", layering.Path("./secrets")).
		Layer("backup", layering.Path("./backup")).
		Layer("after", layering.Path("./after"), layering.DependsOn("backup")).
		Layer("alone", layering.Path("./alone")).
		Layer("behind", layering.Path("./behind"), layering.DependsOn("secrets")).
		Layer("behind2", layering.Path("./behind2"), layering.DependsOn("backup", "secrets"))
	rep := lintReport(t, b)
	fs := failing(rep)
	assert.Equal(t, map[string][]lint.Rule{
		"after": {lint.RuleCRDOrder, lint.RuleWebhookOrder},
		"alone": {lint.RuleCRDOrder, lint.RuleWebhookOrder},
	}, byLayer(fs), "%v", fs)
	for _, f := range fs {
		if f.Rule == lint.RuleCRDOrder {
			assert.Contains(t, f.Message, `the CRDs of external-secrets.io come from HelmRelease/flux-system/external-secrets in layer "secrets" (assumed`, f.Layer)
		}
	}
	var chart *lint.Coverage
	for i := range rep.Coverage {
		if rep.Coverage[i].Cause == lint.CoverageChart {
			chart = &rep.Coverage[i]
		}
	}
	require.NotNil(t, chart, "%+v", rep.Coverage)
	assert.Subset(t, chart.Layers, []string{"backup", "after", "behind2"}, "the layers after the charts lint could not render are not fully checked")

	// Where no layer installs the operator the table ties to the group,
	// the chart may be the one that brings its CRDs: no claim.
	delete(files, "secrets/eso.yaml")
	b = stack().Layer("secrets", layering.Path("./secrets")).
		Layer("backup", layering.Path("./backup")).
		Layer("after", layering.Path("./after"), layering.DependsOn("backup"))
	fs = failing(lintReport(t, b))
	assert.Empty(t, fs)
}
