package status_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/status"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		reason, message, want string
	}{
		{"ReconciliationFailed", `ExternalSecret/apps/db dry-run failed: Internal error occurred: failed calling webhook "validate.externalsecret.external-secrets.io": failed to call webhook: Post "https://external-secrets-webhook.external-secrets.svc:443/validate": dial tcp 10.0.0.1:443: connect: connection refused`, status.RuleWebhookOrder},
		{"ReconciliationFailed", `ClusterIssuer/letsencrypt dry-run failed: no matches for kind "ClusterIssuer" in version "cert-manager.io/v1"`, status.RuleCRDOrder},
		{"ReconciliationFailed", `ConfigMap/monitoring/settings namespace not specified: namespaces "monitoring" not found`, status.RuleNamespaceOrder},
		{"HealthCheckFailed", `timeout waiting for: [Deployment/crossplane-system/crossplane status: 'InProgress']`, status.RuleHealthCheck},
		{"HealthCheckFailed", `health check canceled`, status.RuleHealthCheck},
		{"BuildFailed", `kustomize build failed: accumulating resources`, ""},
	} {
		t.Run(tt.want+" "+tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, status.Classify(tt.reason, tt.message), "Classify(%q, %q)", tt.reason, tt.message)
		})
	}
}

const webhookMsg = `ExternalSecret/apps/db dry-run failed: failed calling webhook "v.es.io": failed to call webhook: Post "https://w.svc:443/": dial tcp: connect: connection refused`

// bootstrap is a bootstrap in the middle: namespaces and crds Ready, the
// operator health-checking, crs failing on its webhook (it depends on crds
// only), apps waiting on crs, and a suspended layer.
func bootstrap() []obj {
	return []obj{
		source(),
		{kind: status.KindKustomization, name: "namespaces", conds: ready(t0), status: applied()},
		{kind: status.KindKustomization, name: "crds", deps: []string{"namespaces"}, conds: ready(t0), status: applied()},
		{kind: status.KindKustomization, name: "operator", deps: []string{"crds"}, conds: []map[string]any{
			cond("Ready", "Unknown", "Progressing", "Reconciliation in progress", t0.Add(time.Second)),
			cond("Healthy", "Unknown", "Progressing", "Running health checks for revision "+rev+" with a timeout of 5m0s", t0.Add(time.Second)),
		}},
		{kind: status.KindKustomization, name: "crs", deps: []string{"crds"}, conds: []map[string]any{
			cond("Ready", "False", "ReconciliationFailed", webhookMsg, t0.Add(2*time.Second)),
		}, status: map[string]any{"lastAttemptedRevision": rev}},
		{kind: status.KindKustomization, name: "apps", deps: []string{"crs", "operator"}, conds: []map[string]any{
			cond("Ready", "False", "DependencyNotReady", "dependency 'flux-system/crs' is not ready", t0.Add(3*time.Second)),
		}},
		{kind: status.KindKustomization, name: "extras", deps: []string{"namespaces"}, suspend: true},
	}
}

func TestSnapshot(t *testing.T) {
	dyn, disc := fakeClients(bootstrap()...)
	w, err := status.NewFromClients(dyn, disc, status.WithClock(func() time.Time { return t0.Add(time.Minute) }))
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)

	var got []string
	for _, l := range snap.Layers {
		got = append(got, l.Name+" "+string(l.State)+" "+l.Step+" "+strings.Join(l.WaitingOn, ","))
	}
	assert.Equal(t, []string{
		"namespaces Ready  ",
		"crds Ready  ",
		"crs Failed  ",
		"extras Suspended  ",
		"operator Reconciling health-checking ",
		"apps WaitingOn  flux-system/crs,flux-system/operator",
	}, got, "the layers along the graph, with their states")
	crs := snap.Layer(status.Ref{Kind: status.KindKustomization, Namespace: "flux-system", Name: "crs"})
	require.NotNil(t, crs)
	require.NotNil(t, crs.Explanation, "the webhook failure has no explanation")
	assert.Equal(t, status.RuleWebhookOrder, crs.Explanation.Rule)
	assert.Equal(t, rev, crs.SourceRevision, "the revision the source serves")
	assert.Equal(t, t0.Add(2*time.Second), crs.FailingSince, "a failure seen on the first LIST dates from its condition")

	var blocking []string
	for _, b := range snap.Blocking() {
		blocking = append(blocking, b.Name+" "+string(b.State)+" holds "+strings.Join(b.Holds, ","))
	}
	assert.Equal(t, []string{
		"crs Failed holds flux-system/apps",
		"operator Reconciling holds flux-system/apps",
	}, blocking, "the layers that block the rest (apps is merely waiting)")
	assert.False(t, snap.Done(""))
	assert.Equal(t, 2, snap.Counts()[status.StateReady])
}

func TestSnapshotSourceNotReady(t *testing.T) {
	src := source()
	src.conds = []map[string]any{cond("Ready", "False", "OCIArtifactPullFailed", "failed to pull", t0)}
	src.status = nil
	dyn, disc := fakeClients(src,
		obj{kind: status.KindKustomization, name: "a", conds: []map[string]any{cond("Ready", "False", "ArtifactFailed", "Source artifact not found, retrying in 30s", t0)}},
		obj{kind: status.KindKustomization, name: "b", deps: []string{"a", "gone"}, conds: []map[string]any{cond("Ready", "False", "DependencyNotReady", "dependency 'flux-system/a' is not ready", t0)}},
	)
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	var blocking []string
	for _, b := range snap.Blocking() {
		blocking = append(blocking, b.Name+" "+string(b.State)+" missing="+map[bool]string{true: "yes", false: "no"}[b.Missing]+" holds "+strings.Join(b.Holds, ","))
	}
	assert.Equal(t, []string{
		"a SourceNotReady missing=no holds flux-system/b",
		"gone Unknown missing=yes holds flux-system/b",
	}, blocking)
}

func TestExplainer(t *testing.T) {
	dyn, disc := fakeClients(bootstrap()...)
	var asked []status.Query
	w, err := status.NewFromClients(dyn, disc, status.WithExplainer(status.ExplainFunc(func(q status.Query) (status.Explanation, bool) {
		asked = append(asked, q)
		if q.Layer.Name != "crs" || q.Rule != status.RuleWebhookOrder {
			return status.Explanation{}, false
		}
		return status.Explanation{Edge: "crs -> operator", Finding: "clusters/e2e/crs.yaml:1: layer \"crs\": …"}, true
	})))
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, asked, 1, "the explainer is asked about failed layers only")
	crs := snap.Layer(status.Ref{Kind: status.KindKustomization, Namespace: "flux-system", Name: "crs"})
	require.NotNil(t, crs.Explanation)
	assert.Equal(t, status.Explanation{Rule: status.RuleWebhookOrder, Edge: "crs -> operator", Fix: crs.Explanation.Fix,
		Finding: "clusters/e2e/crs.yaml:1: layer \"crs\": …"}, *crs.Explanation)
	assert.NotEmpty(t, crs.Explanation.Fix, "the built-in fix stays when the explainer gives none")
}

func TestOptionsValidate(t *testing.T) {
	dyn, disc := fakeClients()
	_, err := status.NewFromClients(dyn, disc, status.WithNamespace(""), status.WithExplainer(nil), nil)
	require.ErrorIs(t, err, status.ErrInvalidOption)
	assert.Contains(t, err.Error(), "WithNamespace: empty namespace")
	assert.Contains(t, err.Error(), "WithExplainer: nil explainer")
	assert.Contains(t, err.Error(), "nil Option", "a nil option is refused, not called")
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	_, err = w.Wait(t.Context(), status.WithStalled(0), nil)
	require.ErrorIs(t, err, status.ErrInvalidOption)
	assert.ErrorContains(t, err, "WithStalled: stalled limit 0s: must be positive")
	assert.ErrorContains(t, err, "nil WaitOption")
}

func TestNoFlux(t *testing.T) {
	dyn, disc := fakeClients()
	disc.Resources = nil
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	_, err = w.Snapshot(t.Context())
	require.ErrorIs(t, err, status.ErrNoFlux)
}

func TestWaitDone(t *testing.T) {
	objs := []obj{source(),
		{kind: status.KindKustomization, name: "a", conds: ready(t0), status: applied()},
		{kind: status.KindKustomization, name: "b", deps: []string{"a"}, conds: []map[string]any{cond("Ready", "False", "DependencyNotReady", "dependency 'flux-system/a' is not ready", t0)}},
	}
	dyn, disc := fakeClients(objs...)
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	seen := make(chan *status.Snapshot, 10)
	type result struct {
		snap *status.Snapshot
		err  error
	}
	done := make(chan result, 1)
	go func() {
		snap, err := w.Wait(t.Context(), status.WithProgress(func(s *status.Snapshot) { seen <- s }))
		done <- result{snap, err}
	}()
	first := <-seen
	assert.False(t, first.Done(""), "b is waiting")
	b := objs[2]
	b.conds, b.status = ready(t0.Add(time.Second)), applied()
	_, err = dyn.Resource(ksGVR).Namespace("flux-system").Update(t.Context(), b.u(), metav1.UpdateOptions{})
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err, "wait after every layer is Ready")
	assert.True(t, r.snap.Done(""))
}

func TestWaitFails(t *testing.T) {
	for _, tt := range []struct {
		name    string
		layer   obj
		opts    []status.WaitOption
		message string
	}{
		{"stalled", obj{kind: status.KindKustomization, name: "a", conds: []map[string]any{cond("Ready", "False", "ReconciliationFailed", webhookMsg, t0)}},
			[]status.WaitOption{status.WithStalled(time.Millisecond)}, `Kustomization/flux-system/a failing since 2026-01-02T03:04:05Z: ` + webhookMsg + ` [webhook-order]`},
		{"stalled condition", obj{kind: status.KindKustomization, name: "a", conds: []map[string]any{cond("Ready", "False", "AccessDenied", "cross-namespace references are not allowed", t0), cond("Stalled", "True", "AccessDenied", "x", t0)}},
			nil, `Kustomization/flux-system/a failed (terminal): cross-namespace references are not allowed`},
		{"build failure of the served revision", obj{kind: status.KindKustomization, name: "a", conds: []map[string]any{cond("Ready", "False", "BuildFailed", "kustomize build failed", t0)}, status: map[string]any{"lastAttemptedRevision": rev}},
			nil, `Kustomization/flux-system/a failed (terminal): kustomize build failed`},
		{"suspended", obj{kind: status.KindKustomization, name: "a", suspend: true}, nil, `Kustomization/flux-system/a suspended`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dyn, disc := fakeClients(source(), tt.layer)
			// A second after the failure: only the stalled case is past
			// its limit.
			w, err := status.NewFromClients(dyn, disc, status.WithClock(func() time.Time { return t0.Add(time.Second) }))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a failure bound: Wait answers at once
			defer cancel()
			_, err = w.Wait(ctx, tt.opts...)
			var failed *status.FailedError
			require.ErrorAs(t, err, &failed, "Wait on a layer that will not heal")
			assert.Equal(t, "bootstrap failed: "+tt.message, err.Error())
		})
	}
}

func TestWaitContextEnds(t *testing.T) {
	dyn, disc := fakeClients(source(), obj{kind: status.KindKustomization, name: "a", conds: []map[string]any{cond("Ready", "Unknown", "Progressing", "Reconciliation in progress", t0)}})
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	_, err = w.Wait(ctx, status.WithProgress(func(*status.Snapshot) { cancel() }))
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "Kustomization/flux-system/a Reconciling")
	var failed *status.FailedError
	assert.False(t, errors.As(err, &failed))
}

func TestTimeline(t *testing.T) {
	rec := status.NewRecorder(t0)
	at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
	ks := func(name string, deps []string, state string) status.Layer {
		l := status.Layer{Ref: status.Ref{Kind: status.KindKustomization, Namespace: "flux-system", Name: name}, Current: true, SourceRevision: rev}
		for _, d := range deps {
			l.DependsOn = append(l.DependsOn, "flux-system/"+d)
		}
		switch state {
		case "ready":
			l.State, l.Applied, l.Ready = status.StateReady, rev, true
		case "apply":
			l.State, l.Step = status.StateReconciling, status.StepApplying
		case "health":
			l.State, l.Step = status.StateReconciling, status.StepHealthChecking
		case "wait":
			l.State = status.StateWaitingOn
		}
		return l
	}
	add := func(sec float64, a, b, c string) {
		rec.Add(&status.Snapshot{At: at(sec), Layers: []status.Layer{ks("a", nil, a), ks("b", []string{"a"}, b), ks("c", nil, c)}})
	}
	add(0, "apply", "wait", "apply")
	add(1, "health", "wait", "ready")
	add(4, "ready", "wait", "ready")   // b's dependency Ready at 4s
	add(30, "ready", "apply", "ready") // b polls again at 30s: 26s lost
	add(32, "ready", "ready", "ready")
	tl := rec.Timeline()
	assert.True(t, tl.Complete)
	assert.InDelta(t, 32, tl.Total, 1e-9)
	assert.Equal(t, []string{"flux-system/a", "flux-system/b"}, tl.CriticalPath)
	assert.InDelta(t, 26, tl.LostOnPath, 1e-9)
	assert.InDelta(t, 26, tl.LostAll, 1e-9)
	var b *status.TimelineLayer
	for i := range tl.Layers {
		if tl.Layers[i].Name == "b" {
			b = &tl.Layers[i]
		}
	}
	require.NotNil(t, b)
	assert.Equal(t, []status.Span{{Phase: status.PhaseWaiting, Start: 0, End: 30}, {Phase: status.PhaseApplying, Start: 30, End: 32}}, b.Spans)
	assert.Equal(t, &status.Span{Phase: status.PhaseWaiting, Start: 4, End: 30}, b.Lost)

	var page bytes.Buffer
	require.NoError(t, tl.WriteHTML(&page))
	html := page.String()
	assert.Len(t, regexp.MustCompile(`<g class="bar" data-layer="[^"]+"`).FindAllString(html, -1), 3, "one bar per layer")
	assert.Contains(t, html, `class="lost"`)
	assert.NotContains(t, html, "<script")
	for _, m := range regexp.MustCompile(`(?:href|src)=`).FindAllString(html, -1) {
		t.Errorf("the page links to something: %s", m)
	}
	for _, u := range regexp.MustCompile(`https?://[^"\s]+`).FindAllString(html, -1) {
		assert.Equal(t, "http://www.w3.org/2000/svg", u, "the only URL is the SVG namespace")
	}
}

func TestWriteText(t *testing.T) {
	dyn, disc := fakeClients(bootstrap()...)
	w, err := status.NewFromClients(dyn, disc, status.WithClock(func() time.Time { return t0.Add(time.Minute) }))
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, snap.WriteText(&b))
	testutil.Golden(t, "text", b.Bytes())

	snap.Changed = []status.Ref{{Kind: status.KindKustomization, Namespace: "flux-system", Name: "crs"}, {Kind: status.KindKustomization, Namespace: "flux-system", Name: "gone"}}
	b.Reset()
	require.NoError(t, snap.WriteChanges(&b))
	testutil.Golden(t, "changes", b.Bytes())
}

// TestReconstruct draws a finished bootstrap from its objects alone: a
// waits for b until 30s, though b was Ready at 12s (a 30s poll): 18s lost.
func TestReconstruct(t *testing.T) {
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	dyn, disc := fakeClients(source(),
		obj{kind: status.KindKustomization, name: "b", conds: ready(at(12)), status: applied(), created: at(0), took: 10 * time.Second},
		obj{kind: status.KindKustomization, name: "a", deps: []string{"b"}, conds: ready(at(33)), status: applied(), created: at(1), took: 3 * time.Second},
	)
	w, err := status.NewFromClients(dyn, disc, status.WithClock(func() time.Time { return at(60) }))
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	tl := status.Reconstruct(snap)
	assert.True(t, tl.Complete)
	assert.Equal(t, t0, tl.Start)
	assert.InDelta(t, 33, tl.Total, 1e-9)
	assert.Equal(t, []string{"flux-system/b", "flux-system/a"}, tl.CriticalPath)
	byName := map[string]status.TimelineLayer{}
	for _, l := range tl.Layers {
		byName[l.Name] = l
	}
	assert.Equal(t, []status.Span{{Phase: status.PhaseWaiting, Start: 0, End: 2}, {Phase: status.PhaseApplying, Start: 2, End: 12}}, byName["b"].Spans)
	assert.Equal(t, []status.Span{{Phase: status.PhaseWaiting, Start: 1, End: 30}, {Phase: status.PhaseApplying, Start: 30, End: 33}}, byName["a"].Spans)
	assert.Equal(t, &status.Span{Phase: status.PhaseWaiting, Start: 12, End: 30}, byName["a"].Lost)
	assert.InDelta(t, 18, tl.LostOnPath, 1e-9)
}

// TestFluxOperator: FluxInstance and ResourceSet are layers when the API
// serves flux-operator's group, and left out when it does not.
func TestFluxOperator(t *testing.T) {
	objs := []obj{source(),
		{kind: status.KindFluxInstance, name: "flux", conds: ready(t0), status: map[string]any{"lastAppliedRevision": "v2.7.0@sha256:abc"}},
		{kind: status.KindResourceSet, name: "apps", conds: []map[string]any{cond("Ready", "False", "ReconciliationFailed", `namespaces "apps" not found`, t0)}},
	}
	dyn, disc := fakeClients(objs...)
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	snap, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Empty(t, snap.Layers, "flux-operator's kinds read though the API does not serve them")

	disc.Resources = append(disc.Resources, &metav1.APIResourceList{GroupVersion: "fluxcd.controlplane.io/v1", APIResources: []metav1.APIResource{
		{Name: "fluxinstances", Kind: "FluxInstance", Namespaced: true}, {Name: "resourcesets", Kind: "ResourceSet", Namespaced: true},
	}})
	snap, err = w.Snapshot(t.Context())
	require.NoError(t, err)
	var got []string
	for _, l := range snap.Layers {
		got = append(got, l.Kind+"/"+l.Name+" "+string(l.State))
	}
	assert.Equal(t, []string{"FluxInstance/flux Ready", "ResourceSet/apps Failed"}, got)
	rs := snap.Layer(status.Ref{Kind: status.KindResourceSet, Namespace: "flux-system", Name: "apps"})
	require.NotNil(t, rs.Explanation)
	assert.Equal(t, status.RuleNamespaceOrder, rs.Explanation.Rule)
	assert.Contains(t, rs.Explanation.Fix, `namespace "apps"`)
}

// TestWatchRelistsAfterExpiry: a watch resumed from a compacted resource
// version (410) lists the kind again and goes on from there, instead of
// ending the watch.
func TestWatchRelistsAfterExpiry(t *testing.T) {
	objs := []obj{source(),
		{kind: status.KindKustomization, name: "a", conds: ready(t0), status: applied()},
		{kind: status.KindKustomization, name: "b", deps: []string{"a"}, conds: []map[string]any{cond("Ready", "False", "DependencyNotReady", "dependency 'flux-system/a' is not ready", t0)}},
	}
	dyn, disc := fakeClients(objs...)
	watches := make(chan *watch.FakeWatcher, 4)
	dyn.PrependWatchReactor("kustomizations", func(clienttesting.Action) (bool, watch.Interface, error) {
		fw := watch.NewFakeWithChanSize(4, false)
		watches <- fw
		return true, fw, nil
	})
	w, err := status.NewFromClients(dyn, disc)
	require.NoError(t, err)
	snaps, err := w.Watch(t.Context())
	require.NoError(t, err)
	state := func(s *status.Snapshot, name string) status.State {
		for _, l := range s.Layers {
			if l.Name == name {
				return l.State
			}
		}
		return ""
	}
	require.Equal(t, status.StateWaitingOn, state(<-snaps, "b"))
	first := <-watches
	// b becomes Ready while the watch is down: only a new LIST sees it.
	b := objs[2]
	b.conds, b.status = ready(t0.Add(time.Second)), applied()
	_, err = dyn.Resource(ksGVR).Namespace("flux-system").Update(t.Context(), b.u(), metav1.UpdateOptions{})
	require.NoError(t, err)
	first.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (5)"})
	snap, ok := <-snaps
	require.True(t, ok, "the watch ended on a 410: %v", w.Err())
	assert.Equal(t, status.StateReady, state(snap, "b"), "the LIST after the 410 sees b Ready")
	// And the kind is watched again from the new list.
	second := <-watches
	a := objs[1]
	a.suspend = true
	second.Modify(a.u())
	snap, ok = <-snaps
	require.True(t, ok, "the watch after the relist: %v", w.Err())
	assert.Equal(t, status.StateSuspended, state(snap, "a"))
}

// A watch its caller stops ends with no error: the watches end with ctx,
// and which of the two the watch sees first is the scheduler's choice
// (fluxpack status once said "the watches ended" with exit 2 after every
// layer was Ready). Many rounds, so that either order is seen.
func TestWatchStoppedIsNoError(t *testing.T) {
	dyn, disc := fakeClients(source(), obj{kind: status.KindKustomization, name: "a", conds: ready(t0), status: applied()})
	for range 50 {
		w, err := status.NewFromClients(dyn, disc)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		snaps, err := w.Watch(ctx)
		require.NoError(t, err)
		<-snaps
		cancel()
		for range snaps { //nolint:revive // until the watch ends
		}
		require.NoError(t, w.Err())
	}
}
