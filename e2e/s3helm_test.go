//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// crossplaneChart is the test chart standing in for Crossplane's: the core
// Deployment, crossplane in the release namespace.
var crossplaneChart = filepath.Join("testdata", "charts", "crossplane")

// crossplaneStartup is how long the crossplane pod takes to start once
// scheduled: the window in which its HelmRelease is installed but not Ready,
// which the crossplane layer's health check must wait out.
const crossplaneStartup = 5 * time.Second

// crossplaneHealthCheck is seed 003's health check of the crossplane layer:
// the HelmRelease its folder holds (testdata/s3/crossplane/helmrelease.yaml).
var crossplaneHealthCheck = meta.NamespacedObjectKindReference{
	APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind, Name: "crossplane", Namespace: "crossplane-system",
}

// crossplaneSource pushes the crossplane chart to the cluster's registry and
// returns it and the OCIRepository the HelmRelease's chartRef names, in the
// HelmRelease's namespace: the file the crossplane layer's folder lacks until
// the registry's address is known.
func crossplaneSource(t *testing.T, c *Cluster) (Chart, []byte) {
	t.Helper()
	chart := pushChart(t, c, crossplaneChart)
	src := chart.Source()
	src.Namespace = crossplaneHealthCheck.Namespace
	return chart, manifest(t, src)
}

// readyMark is when a watch first delivered a Flux object Ready=True for
// its current generation, and the object's resourceVersion then.
type readyMark struct {
	At              time.Time
	ResourceVersion string
}

// readyMarks records the first readyMark of every HelmRelease and
// Kustomization, by "Kind/namespace/name".
type readyMarks struct {
	mu    sync.Mutex
	marks map[string]readyMark
}

// WatchFirstReady records, from now until the test ends, when each
// HelmRelease and Kustomization first turns Ready for its generation.
func (c *Cluster) WatchFirstReady() *readyMarks {
	m := &readyMarks{marks: map[string]readyMark{}}
	c.WatchEach(&helmv2.HelmReleaseList{}, func(_ context.Context, obj client.Object) {
		hr := obj.(*helmv2.HelmRelease)
		m.record(helmv2.HelmReleaseKind, hr, hr.Status.Conditions, hr.Status.ObservedGeneration)
	})
	c.WatchEach(&kustomizev1.KustomizationList{}, func(_ context.Context, obj client.Object) {
		k := obj.(*kustomizev1.Kustomization)
		m.record(kustomizev1.KustomizationKind, k, k.Status.Conditions, k.Status.ObservedGeneration)
	})
	return m
}

func (m *readyMarks) record(kind string, obj client.Object, conds []metav1.Condition, observed int64) {
	now := time.Now()
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	if ready == nil || ready.Status != metav1.ConditionTrue || observed != obj.GetGeneration() {
		return
	}
	key := fmt.Sprintf("%s/%s/%s", kind, obj.GetNamespace(), obj.GetName())
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.marks[key]; !ok {
		m.marks[key] = readyMark{At: now, ResourceVersion: obj.GetResourceVersion()}
	}
}

func (m *readyMarks) get(t *testing.T, key string) readyMark {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	mark, ok := m.marks[key]
	require.True(t, ok, "%s was never seen Ready", key)
	return mark
}

// at is the clock time of a layer's Ready in the Observer's report.
func (o *Observer) at(l *layer) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start.Add(l.Ready)
}

// requireCrossplaneGate proves the crossplane layer is seed 003's: its
// Kustomization health-checks the HelmRelease (not wait), helm-controller
// installed the pushed chart and made the release Ready only after the
// crossplane pod was let start (opened), and the crossplane and epis layers
// became Ready only after the HelmRelease was, by three clocks: the
// resourceVersions of the writes (one etcd holds every kind, so they are
// revisions of one store), the times the watches delivered them, and the
// HelmRelease's Ready lastTransitionTime against the Observer's report.
func requireCrossplaneGate(t *testing.T, c *Cluster, d *Deployment, chart Chart, marks *readyMarks, opened time.Time) {
	t.Helper()
	ctx := t.Context()
	hc := crossplaneHealthCheck

	var ks kustomizev1.Kustomization
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "crossplane"}, &ks))
	require.Equal(t, []meta.NamespacedObjectKindReference{hc}, ks.Spec.HealthChecks, "the crossplane layer does not health-check its HelmRelease")
	require.False(t, ks.Spec.Wait, "wait: true would make Flux ignore the HelmRelease health check")

	var hr helmv2.HelmRelease
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: hc.Namespace, Name: hc.Name}, &hr))
	ready := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReadyCondition)
	require.NotNil(t, ready, "HelmRelease/%s/%s has no Ready condition", hc.Namespace, hc.Name)
	require.Equal(t, metav1.ConditionTrue, ready.Status, "HelmRelease/%s/%s: %s: %s", hc.Namespace, hc.Name, ready.Reason, ready.Message)
	version := chart.Version + "+" + strings.TrimPrefix(chart.Digest, "sha256:")[:12]
	latest := hr.Status.History.Latest()
	require.NotNil(t, latest, "HelmRelease/%s/%s has no release history", hc.Namespace, hc.Name)
	assert.Equal(t, chart.Name, latest.ChartName)
	assert.Equal(t, version, latest.ChartVersion, "helm-controller did not install the pushed chart artifact")
	assert.Equal(t, "deployed", latest.Status)
	assert.Equal(t, hc.Namespace, latest.Namespace)

	var dep appsv1.Deployment
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "crossplane-system", Name: "crossplane"}, &dep))
	assert.Equal(t, "crossplane", dep.Labels["helm.toolkit.fluxcd.io/name"], "Deployment/crossplane-system/crossplane was not installed by helm-controller")
	assert.Equal(t, "crossplane-"+strings.ReplaceAll(version, "+", "_"), dep.Labels["helm.sh/chart"])
	assert.Equal(t, "closed", dep.Spec.Template.Annotations[podGateAnnotation], "the HelmRelease's values did not reach the pod template")
	assert.Equal(t, int32(1), dep.Status.AvailableReplicas)

	hrMark := marks.get(t, helmv2.HelmReleaseKind+"/"+hc.Namespace+"/"+hc.Name)
	require.False(t, opened.IsZero(), "the crossplane pod was never gated: the HelmRelease did not wait for it")
	require.True(t, opened.Before(hrMark.At), "HelmRelease/%s/%s was Ready (%s) before the crossplane pod could start (%s)",
		hc.Namespace, hc.Name, hrMark.At.Format(time.RFC3339Nano), opened.Format(time.RFC3339Nano))

	for _, name := range []string{"crossplane", "epis"} {
		l := d.Layers[name]
		require.NotNil(t, l, "layer %q was never seen", name)
		km := marks.get(t, kustomizev1.KustomizationKind+"/"+fluxNamespace+"/"+name)
		cmp, err := resourceversion.CompareResourceVersion(hrMark.ResourceVersion, km.ResourceVersion)
		require.NoError(t, err)
		require.Negative(t, cmp, "Kustomization/%s/%s was Ready (resourceVersion %s) before HelmRelease/%s/%s (resourceVersion %s)",
			fluxNamespace, name, km.ResourceVersion, hc.Namespace, hc.Name, hrMark.ResourceVersion)
		layerAt := d.Observer.at(l)
		require.True(t, hrMark.At.Before(layerAt), "layer %q was Ready at %s, before HelmRelease/%s/%s was seen Ready at %s",
			name, layerAt.Format(time.RFC3339Nano), hc.Namespace, hc.Name, hrMark.At.Format(time.RFC3339Nano))
		require.False(t, ready.LastTransitionTime.After(layerAt), "layer %q was Ready at %s, before HelmRelease/%s/%s turned Ready at %s",
			name, layerAt.Format(time.RFC3339Nano), hc.Namespace, hc.Name, ready.LastTransitionTime.Format(time.RFC3339))
	}
	t.Logf("crossplane pod started %.1fs, HelmRelease/%s/%s Ready %.1fs, layer crossplane Ready %.1fs, epis %.1fs (from applying the root objects)",
		d.Observer.sinceStart(opened), hc.Namespace, hc.Name, d.Observer.sinceStart(hrMark.At),
		d.Layers["crossplane"].Ready.Seconds(), d.Layers["epis"].Ready.Seconds())
}

// sinceStart is t in seconds from the Observer's start.
func (o *Observer) sinceStart(t time.Time) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return t.Sub(o.start).Seconds()
}
