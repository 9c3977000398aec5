//go:build e2e

package e2e

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/layering"
)

// esoChart is the test chart standing in for the External Secrets operator
// (CRDs, a Deployment, a validating webhook); esoRelease is the name and
// namespace of its release.
var esoChart = filepath.Join("testdata", "charts", "external-secrets-operator")

const esoRelease = "external-secrets"

// s0HelmLayouts are S0's two layouts with the operator installed by
// helm-controller from an OCI chart, as in seed 002. The chart's
// OCIRepository is a plain manifest in the "sources" layer; the CRDs are the
// chart's crds/ folder applied as plain manifests (the seed's way), so every
// HelmRelease skips them. fluxpack's chain makes the CRs wait for the
// operator layer, whose Kustomization waits for the HelmRelease, which
// helm-controller makes Ready only once the operator's pod is (so its
// webhook serves). In the naive layout the HelmRelease is independent (it
// creates its namespace, as the seed's does) and the CRs wait for the CRDs
// only, retrying after 10s.
var s0HelmLayouts = map[string]func(operator ...layering.HelmOption) *layering.Builder{
	"fluxpack": func(operator ...layering.HelmOption) *layering.Builder {
		return stack().
			Layer("sources").
			Layer("namespaces").
			Then("crds").
			Then("operator", layering.DependsOn("sources"), layering.MarkOperator(), layering.HelmRelease(operator...)).
			Layer("crs", layering.DependsOnOperator())
	},
	"naive": func(operator ...layering.HelmOption) *layering.Builder {
		return handStack().
			Layer("sources").
			Layer("namespaces").
			Then("crds").
			Layer("operator", layering.HelmRelease(append(operator, layering.CreateNamespace())...)).
			Layer("crs", layering.DependsOn("crds"), layering.RetryInterval(10*time.Second))
	},
}

// startS0Helm starts a cluster for one layout, in the order startS0 forces
// (release says when the webhook may serve), with the chart's webhook
// configuration, not yet installed, in the cluster already: made as the
// chart makes it and marked as the release's, so that the install adopts
// it.
// It pushes the test chart to the cluster's registry, and returns the
// folder to deploy (S0's namespace and custom resources, the chart's CRDs,
// the chart's OCIRepository) and the operator's HelmRelease options: the
// chart, CRDs skipped, the release, and inline values that point the
// chart's webhook at the test's server and close its pod's gate.
func startS0Helm(t *testing.T, m Mode, release func(*kustomizev1.Kustomization) bool) (*Cluster, *Webhook, Chart, string, []layering.HelmOption) {
	c := StartCluster(t, m)
	hook := NewWebhook(t)
	c.RunGatedPods(operatorStartup, c.HoldUntil("crs", release), hook.Serve)
	chart := pushChart(t, c, esoChart)
	c.create(releaseWebhookConfiguration(hook))

	tree := t.TempDir()
	copyTree(t, filepath.Join("testdata", "s0", "namespaces"), filepath.Join(tree, "namespaces"))
	copyTree(t, filepath.Join("testdata", "s0", "crs"), filepath.Join(tree, "crs"))
	copyTree(t, filepath.Join(esoChart, "crds"), filepath.Join(tree, "crds"))
	writeFiles(t, tree, map[string][]byte{"sources/" + chart.Name + ".yaml": manifest(t, chart.Source())})

	return c, hook, chart, tree, []layering.HelmOption{
		layering.ChartRef(chart.Ref()),
		layering.CRDs(helmv2.Skip),
		layering.ReleaseName(esoRelease),
		layering.ReleaseNamespace(esoRelease),
		layering.Values(map[string]any{
			"podAnnotations": map[string]any{podGateAnnotation: "closed"},
			"webhook":        map[string]any{"url": hook.URL(), "caBundle": base64.StdEncoding.EncodeToString(hook.CABundle())},
		}),
	}
}

// releaseWebhookConfiguration is the webhook configuration the chart
// installs for esoRelease (its name, webhooks and clientConfig), marked as
// the release's. helm-controller installs taking ownership of objects that
// exist (unless spec.install.disableTakeOwnership), and Helm adopts one
// with the release's ownership label and annotations even without.
func releaseWebhookConfiguration(hook *Webhook) *admissionregistrationv1.ValidatingWebhookConfiguration {
	vwc := hook.Configuration()
	vwc.Name = esoRelease + "-validate"
	vwc.Labels = map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	vwc.Annotations = map[string]string{"meta.helm.sh/release-name": esoRelease, "meta.helm.sh/release-namespace": esoRelease}
	return vwc
}

func TestS0Helm(t *testing.T) {
	t.Parallel()
	forEachMode(t, testS0Helm)
}

func testS0Helm(t *testing.T, m Mode) {
	t.Run("fluxpack", func(t *testing.T) {
		t.Parallel()
		c, hook, chart, tree, operator := startS0Helm(t, m, waitingForDependency)
		d := Deploy(t, c, "s0helm", tree, nil, s0HelmLayouts["fluxpack"](operator...))
		d.RequireNoFailures(t)
		assert.Positive(t, hook.Requests(), "the webhook never validated a CR")
		requireRelease(t, c, chart, hook)
		recordRun("S0 (Helm) fluxpack", d, heldNote)
	})

	t.Run("naive", func(t *testing.T) {
		t.Parallel()
		c, hook, chart, tree, operator := startS0Helm(t, m, reconcileFailed)
		d := Deploy(t, c, "s0helm", tree, nil, s0HelmLayouts["naive"](operator...))
		note := requireNaiveRace(t, d, "sources", "namespaces", "crds", "operator", rootName)
		requireRelease(t, c, chart, hook)
		recordRun("S0 (Helm) naive", d, note)
	})
}

// requireRelease checks that helm-controller installed the chart: the
// HelmRelease is Ready with the chart's version from the pushed OCI
// artifact, the release's Deployment and webhook configuration carry the
// chart's labels and the inline values, and the CRDs are the crds layer's,
// not Helm's.
func requireRelease(t *testing.T, c *Cluster, chart Chart, hook *Webhook) {
	t.Helper()
	ctx := t.Context()
	var hr helmv2.HelmRelease
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "operator"}, &hr))
	ready := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	require.NotNil(t, ready, "HelmRelease/%s/operator has no Ready condition", fluxNamespace)
	assert.Equal(t, metav1.ConditionTrue, ready.Status, "HelmRelease/%s/operator: %s: %s", fluxNamespace, ready.Reason, ready.Message)
	// helm-controller adds the first 12 hex digits of the OCI artifact's
	// digest to the chart's version (so that a moved tag is an upgrade).
	version := chart.Version + "+" + strings.TrimPrefix(chart.Digest, "sha256:")[:12]
	latest := hr.Status.History.Latest()
	require.NotNil(t, latest, "HelmRelease/%s/operator has no release history", fluxNamespace)
	assert.Equal(t, chart.Name, latest.ChartName)
	assert.Equal(t, version, latest.ChartVersion, "helm-controller did not install the pushed chart artifact")
	assert.Equal(t, "deployed", latest.Status)
	assert.Equal(t, esoRelease, latest.Name)
	assert.Equal(t, esoRelease, latest.Namespace)
	assert.Equal(t, chart.Digest, hr.Status.LastAttemptedRevisionDigest)

	var dep appsv1.Deployment
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: esoRelease, Name: esoRelease}, &dep))
	for k, v := range map[string]string{
		"app.kubernetes.io/name":       chart.Name,
		"app.kubernetes.io/instance":   esoRelease,
		"app.kubernetes.io/version":    "0.20.4",
		"app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart":                chart.Name + "-" + strings.ReplaceAll(version, "+", "_"),
		"helm.toolkit.fluxcd.io/name":  "operator", // set by helm-controller
	} {
		assert.Equal(t, v, dep.Labels[k], "Deployment/%s/%s label %s", esoRelease, esoRelease, k)
	}
	assert.Equal(t, esoRelease, dep.Annotations["meta.helm.sh/release-name"])
	assert.Equal(t, "closed", dep.Spec.Template.Annotations[podGateAnnotation], "the inline values did not reach the pod template")
	assert.Equal(t, int32(1), dep.Status.AvailableReplicas)

	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Name: esoRelease + "-validate"}, &vwc))
	// The test made it before the install (startS0Helm); Helm adopted it.
	assert.Equal(t, chart.Name, vwc.Labels["app.kubernetes.io/name"], "the release did not adopt ValidatingWebhookConfiguration/%s", vwc.Name)
	require.Len(t, vwc.Webhooks, 2)
	for _, w := range vwc.Webhooks {
		require.NotNil(t, w.ClientConfig.URL, "webhook %s", w.Name)
		assert.True(t, strings.HasPrefix(*w.ClientConfig.URL, hook.URL()+"/"), "webhook %s calls %s", w.Name, *w.ClientConfig.URL)
		assert.Equal(t, hook.CABundle(), w.ClientConfig.CABundle, "webhook %s", w.Name)
	}

	for _, name := range []string{"externalsecrets.external-secrets.io", "clustersecretstores.external-secrets.io"} {
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Name: name}, &crd))
		assert.Equal(t, "crds", crd.Labels["kustomize.toolkit.fluxcd.io/name"], "CustomResourceDefinition/%s was not applied by the crds layer", name)
		assert.NotContains(t, crd.Labels, "app.kubernetes.io/managed-by", "CustomResourceDefinition/%s was installed by Helm", name)
	}
}
