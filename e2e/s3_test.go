//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/layering"
)

// s3Layers is seed 003's hierarchy, with its health checks, built with
// package layering: namespaces -> crds -> crossplane (a HelmRelease and its
// chart's source, health check on the HelmRelease) -> epis (CEL health check
// on every EKSPodIdentity) -> security -> infrastructure (also on epis) ->
// observability (on infrastructure and security) -> apps (on infrastructure
// and observability).
func s3Layers(base func() *layering.Builder) *layering.Builder {
	return base().
		Layer("namespaces").
		Then("crds").
		Then("crossplane", layering.HealthChecks(crossplaneHealthCheck)).
		Then("epis", layering.HealthCheckExprs(kustomize.CustomHealthCheck{
			APIVersion: "cloud.ogenki.io/v1alpha1", Kind: "EKSPodIdentity",
			HealthCheckExpressions: kustomize.HealthCheckExpressions{
				Current: "status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True')",
				Failed:  "status.conditions.filter(c, c.type == 'Synced').all(c, c.status == 'False')",
			},
		})).
		Then("security").
		Then("infrastructure", layering.DependsOn("epis"),
			layering.Substitute(map[string]string{"gateway_class": "cilium-tailscale"}),
			layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "eks-mycluster-0-vars"})).
		Then("observability", layering.DependsOn("security")).
		Then("apps", layering.DependsOn("infrastructure"))
}

// TestS3PlatformHierarchy deploys seed 003's hierarchy with Crossplane
// installed the seed's way: the crossplane layer applies a HelmRelease of the
// test's crossplane chart (pushed to the cluster's registry as an OCI chart)
// and health-checks it, so helm-controller's wait for the crossplane
// Deployment, held back crossplaneStartup, gates every later layer.
func TestS3PlatformHierarchy(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, m Mode) {
		t.Run("fluxpack", func(t *testing.T) {
			t.Parallel()
			testS3(t, m, "fluxpack", stack)
		})
		if m == Stock {
			// The same layers without wake, in stock Flux only: what the
			// wake objects save (each edge polled every 30s).
			t.Run("without-wake", func(t *testing.T) {
				t.Parallel()
				testS3(t, m, "without wake", handStack)
			})
		}
	})
}

func testS3(t *testing.T, m Mode, layout string, base func() *layering.Builder) {
	c := StartCluster(t, m)
	c.RunCrossplane()
	var opened atomic.Pointer[time.Time]
	c.RunGatedPods(crossplaneStartup, nil, func() { now := time.Now(); opened.Store(&now) })
	marks := c.WatchFirstReady()
	chart, source := crossplaneSource(t, c)
	// The cluster variables the IaC writes (seed 003's eks-mycluster-0-vars).
	c.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "eks-mycluster-0-vars", Namespace: fluxNamespace},
		Data:       map[string]string{"cluster_name": "mycluster-0", "domain": "priv.cloud.ogenki.io"},
	})
	tr := recordTimeline(t, c) // issue 43: the timeline `fluxpack status --timeline` draws
	d := Deploy(t, c, "s3", filepath.Join("testdata", "s3"), map[string][]byte{"crossplane/ocirepository.yaml": source}, s3Layers(base))
	d.RequireNoFailures(t)
	checkS3Timeline(t, tr, d, m, layout)
	started := opened.Load()
	require.NotNil(t, started, "the crossplane pod was never gated: the HelmRelease did not wait for it")
	requireCrossplaneGate(t, c, d, chart, marks, *started)

	var gw corev1.ConfigMap
	require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: "infrastructure", Name: "gateway"}, &gw))
	require.Equal(t, map[string]string{"gatewayClassName": "cilium-tailscale", "hostname": "*.priv.cloud.ogenki.io"}, gw.Data)

	recordRun("S3 "+layout, d, "")
}

// RunCrossplane plays Crossplane for the EKSPodIdentity stand-ins: once the
// crossplane Deployment is Available it marks every EKSPodIdentity Synced
// and Ready, as Crossplane does once the cloud resources exist.
func (c *Cluster) RunCrossplane() {
	var once sync.Once
	c.WatchEach(&appsv1.DeploymentList{}, func(ctx context.Context, obj client.Object) {
		d := obj.(*appsv1.Deployment)
		if d.Namespace != "crossplane-system" || d.Name != "crossplane" || !available(d) {
			return
		}
		once.Do(func() {
			go func() {
				var list unstructured.UnstructuredList
				list.SetAPIVersion("cloud.ogenki.io/v1alpha1")
				list.SetKind("EKSPodIdentityList")
				stop, err := c.startWatch(ctx, &list, func(ctx context.Context, obj client.Object) {
					u := obj.(*unstructured.Unstructured)
					if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) > 0 {
						return
					}
					now := metav1.Now().UTC().Format("2006-01-02T15:04:05Z")
					patch := fmt.Sprintf(`{"status":{"conditions":[`+
						`{"type":"Synced","status":"True","reason":"ReconcileSuccess","lastTransitionTime":%q},`+
						`{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":%q}]}}`, now, now)
					if err := c.Client.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && ctx.Err() == nil {
						c.breakWith(fmt.Sprintf("stand-in Crossplane: marking EKSPodIdentity/%s/%s Ready: %v", u.GetNamespace(), u.GetName(), err))
					}
				})
				if err != nil {
					c.breakWith(fmt.Sprintf("stand-in Crossplane: watching EKSPodIdentities: %v", err))
					return
				}
				<-ctx.Done()
				stop()
			}()
		})
	})
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.ObservedGeneration == d.Generation
		}
	}
	return false
}
