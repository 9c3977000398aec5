package status_test

import (
	"strconv"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fluxpack/fluxpack/status"
)

var resourceVersion atomic.Int64

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var (
	ksGVR  = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	hrGVR  = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
	ociGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}
	fiGVR  = schema.GroupVersionResource{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "fluxinstances"}
	rsGVR  = schema.GroupVersionResource{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "resourcesets"}
)

// obj is a Flux object of kind in flux-system.
type obj struct {
	kind, name string
	deps       []string
	generation int64
	observed   int64
	suspend    bool
	conds      []map[string]any
	status     map[string]any
	labels     map[string]string
	created    time.Time
	took       time.Duration  // the last reconcile, in status.history
	spec       map[string]any // more spec fields (over a Kustomization's sourceRef)
}

func (o obj) u() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	switch o.kind {
	case status.KindKustomization:
		u.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"kind": "OCIRepository", "name": "platform"}, "spec", "sourceRef")
	case status.KindHelmRelease:
		u.SetAPIVersion("helm.toolkit.fluxcd.io/v2")
	case status.KindFluxInstance, status.KindResourceSet:
		u.SetAPIVersion("fluxcd.controlplane.io/v1")
	default:
		u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	}
	u.SetKind(o.kind)
	u.SetNamespace("flux-system")
	u.SetName(o.name)
	u.SetLabels(o.labels)
	if !o.created.IsZero() {
		u.SetCreationTimestamp(metav1.NewTime(o.created))
	}
	u.SetResourceVersion(strconv.FormatInt(resourceVersion.Add(1), 10)) // the fake keeps it; a RetryWatcher needs one
	gen := o.generation
	if gen == 0 {
		gen = 1
	}
	u.SetGeneration(gen)
	for k, v := range o.spec {
		_ = unstructured.SetNestedField(u.Object, runtime.DeepCopyJSONValue(v), "spec", k)
	}
	if o.suspend {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "suspend")
	}
	var deps []any
	for _, d := range o.deps {
		deps = append(deps, map[string]any{"name": d})
	}
	if deps != nil {
		_ = unstructured.SetNestedSlice(u.Object, deps, "spec", "dependsOn")
	}
	st := map[string]any{}
	for k, v := range o.status {
		st[k] = v
	}
	obs := o.observed
	if obs == 0 && o.conds != nil {
		obs = gen
	}
	if obs != 0 {
		st["observedGeneration"] = obs
	}
	if o.took > 0 {
		st["history"] = []any{map[string]any{"digest": "sha256:0", "lastReconciledStatus": "ReconciliationSucceeded", "lastReconciledDuration": o.took.String()}}
	}
	if o.conds != nil {
		var cs []any
		for _, c := range o.conds {
			cs = append(cs, c)
		}
		st["conditions"] = cs
	}
	u.Object["status"] = runtime.DeepCopyJSONValue(st)
	return u
}

func cond(typ, st, reason, msg string, at time.Time) map[string]any {
	return map[string]any{"type": typ, "status": st, "reason": reason, "message": msg, "lastTransitionTime": at.Format(time.RFC3339)}
}

const rev = "main@sha256:1111111111111111111111111111111111111111111111111111111111111111"

func ready(at time.Time) []map[string]any {
	return []map[string]any{cond("Ready", "True", "ReconciliationSucceeded", "Applied revision: "+rev, at)}
}

func applied() map[string]any {
	return map[string]any{"lastAppliedRevision": rev, "lastAttemptedRevision": rev}
}

// source is the OCIRepository every Kustomization reads, Ready at rev.
func source() obj {
	return obj{kind: status.KindOCIRepository, name: "platform", conds: ready(t0),
		status: map[string]any{"artifact": map[string]any{"revision": rev}}}
}

// fakeClients serves Kustomizations, HelmReleases and OCIRepositories
// holding objs.
func fakeClients(objs ...obj) (*dynamicfake.FakeDynamicClient, *discoveryfake.FakeDiscovery) {
	var ro []runtime.Object
	for _, o := range objs {
		ro = append(ro, o.u())
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		ksGVR: "KustomizationList", hrGVR: "HelmReleaseList", ociGVR: "OCIRepositoryList",
		fiGVR: "FluxInstanceList", rsGVR: "ResourceSetList",
	}, ro...)
	disc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "kustomize.toolkit.fluxcd.io/v1", APIResources: []metav1.APIResource{{Name: "kustomizations", Kind: "Kustomization", Namespaced: true}}},
		{GroupVersion: "helm.toolkit.fluxcd.io/v2", APIResources: []metav1.APIResource{{Name: "helmreleases", Kind: "HelmRelease", Namespaced: true}}},
		{GroupVersion: "source.toolkit.fluxcd.io/v1", APIResources: []metav1.APIResource{{Name: "ocirepositories", Kind: "OCIRepository", Namespaced: true}}},
	}
	return dyn, disc
}
