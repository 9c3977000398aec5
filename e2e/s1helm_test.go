//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/layering"
)

// karpenterChart is the test chart standing in for Karpenter's: a controller
// configured from cloud values and a Secret of one sensitive value.
var karpenterChart = filepath.Join("testdata", "charts", "karpenter")

// s1HelmValuesMap is seed 001's values map for Karpenter, with the values
// ConfigMap in flux-system, where the HelmRelease reads it (valuesFrom names
// objects in the HelmRelease's namespace).
const s1HelmValuesMap = `configMaps:
  - name: karpenter-values
    namespace: flux-system
    values:
      settings.clusterName: cluster_name
      settings.interruptionQueue: karpenter_queue
      replicas: replicas
`

// TestS1Helm is seed 001 with a real chart: Karpenter's HelmRelease takes its
// settings from Terraform's outputs through the values ConfigMap that
// `fluxpack outputs --values-map` makes (pushed with the layers) and its
// sensitive value from the Secret of the sensitive outputs (applied out of
// band, never pushed), and its chart from a classic Helm repository (a
// HelmRepository) the test serves on 127.0.0.1.
func TestS1Helm(t *testing.T) {
	t.Parallel()
	forEachMode(t, testS1Helm)
}

func testS1Helm(t *testing.T, m Mode) {
	c := StartCluster(t, m)
	charts := serveHelmRepository(t, karpenterChart)

	dir, private := t.TempDir(), t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "s1", "terraform.json"))
	require.NoError(t, err)
	outputs := filepath.Join(private, "terraform.json")
	writeFiles(t, private, map[string][]byte{"terraform.json": src, "values-map.yaml": []byte(s1HelmValuesMap)})
	fluxpack(t, "outputs", outputs, "--name", "cluster-vars", "--namespace", fluxNamespace,
		"--values-map", filepath.Join(private, "values-map.yaml"), "-d", filepath.Join(private, "outputs"))
	values, err := os.ReadFile(filepath.Join(private, "outputs", "configmap-karpenter-values.yaml"))
	require.NoError(t, err)

	// The Secret of the sensitive outputs goes to the cluster out of band.
	raw, err := os.ReadFile(filepath.Join(private, "outputs", "secret-cluster-vars.yaml"))
	require.NoError(t, err)
	var secret corev1.Secret
	require.NoError(t, sigyaml.Unmarshal(raw, &secret))
	require.Equal(t, s1Secret, string(secret.Data["authentik_secret_key"]))
	c.create(&secret)

	addons := &sourcev1.HelmRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.HelmRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: "addons", Namespace: fluxNamespace},
		Spec:       sourcev1.HelmRepositorySpec{URL: charts.URL, Interval: metav1.Duration{Duration: 10 * time.Minute}},
	}
	writeFiles(t, dir, map[string][]byte{
		"namespaces/namespace.yaml":    []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: karpenter\n"),
		"config/karpenter-values.yaml": values,
		"config/helmrepository.yaml":   manifest(t, addons),
	})

	layers := stack().
		Layer("namespaces").
		Then("config").
		Then("karpenter", layering.HelmRelease(
			layering.Chart(helmv2.HelmChartTemplateSpec{
				Chart: "karpenter", Version: "0.1.x",
				SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: addons.Name},
			}),
			layering.ValuesFrom(
				helmv2.ValuesReference{Kind: "ConfigMap", Name: "karpenter-values"},
				helmv2.ValuesReference{Kind: "Secret", Name: "cluster-vars", ValuesKey: "authentik_secret_key", TargetPath: "credentials.secretKey"},
			),
			layering.ReleaseName("karpenter"),
			layering.ReleaseNamespace("karpenter"),
		))
	d := Deploy(t, c, "s1helm", dir, nil, layers)
	d.RequireNoFailures(t)
	requireNotInTree(t, d.Dir, s1Secret)

	ctx := t.Context()
	var hr helmv2.HelmRelease
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "karpenter"}, &hr))
	ready := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	require.NotNil(t, ready)
	assert.Equal(t, metav1.ConditionTrue, ready.Status, "HelmRelease/%s/karpenter: %s: %s", fluxNamespace, ready.Reason, ready.Message)
	latest := hr.Status.History.Latest()
	require.NotNil(t, latest)
	assert.Equal(t, "karpenter", latest.ChartName)
	assert.Equal(t, "0.1.0", latest.ChartVersion)
	assert.Positive(t, charts.Served("/index.yaml"), "source-controller never fetched the repository index")
	assert.Positive(t, charts.Served("/karpenter-0.1.0.tgz"), "source-controller never fetched the chart")

	var karpenter appsv1.Deployment
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "karpenter", Name: "karpenter"}, &karpenter))
	assert.Equal(t, "mycluster-0", karpenter.Labels["karpenter.sh/cluster"])
	assert.Equal(t, "karpenter-0.1.0", karpenter.Labels["helm.sh/chart"])
	assert.Equal(t, "karpenter", karpenter.Labels["helm.toolkit.fluxcd.io/name"], "not installed by helm-controller")
	require.NotNil(t, karpenter.Spec.Replicas)
	assert.Equal(t, int32(2), *karpenter.Spec.Replicas, "a number output is a number in the values")
	assert.Equal(t, int32(2), karpenter.Status.AvailableReplicas)
	env := karpenter.Spec.Template.Spec.Containers[0].Env
	require.Len(t, env, 3)
	assert.Equal(t, []corev1.EnvVar{{Name: "CLUSTER_NAME", Value: "mycluster-0"}, {Name: "INTERRUPTION_QUEUE", Value: "Karpenter-mycluster-0"}}, env[:2])
	require.NotNil(t, env[2].ValueFrom)
	assert.Equal(t, "karpenter-credentials", env[2].ValueFrom.SecretKeyRef.Name, "the sensitive value is read from the Secret")

	// The sensitive value reached the chart's Secret, and no ConfigMap, no
	// Deployment and no Flux object.
	var creds corev1.Secret
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "karpenter", Name: "karpenter-credentials"}, &creds))
	assert.Equal(t, s1Secret, string(creds.Data["secretKey"]))
	requireNoConfigMapHolds(ctx, t, c, s1Secret)
	for _, obj := range []client.Object{&karpenter, &hr} {
		b, err := sigyaml.Marshal(obj)
		require.NoError(t, err)
		assert.False(t, strings.Contains(string(b), s1Secret), "%T %s holds the sensitive output", obj, obj.GetName())
	}

	recordRun("S1 (Helm) fluxpack", d, "")
}
