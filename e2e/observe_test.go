//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitingReasons are the Ready=False reasons of a Kustomization that is
// waiting, not failing: kustomize-controller emits no Warning event for them.
var waitingReasons = []string{meta.DependencyNotReadyReason, meta.ArtifactFailedReason}

// layer is what the observer saw of one Kustomization.
type layer struct {
	Name      string
	DependsOn []string
	// Ready is the time from Observe's start until the layer was first seen
	// Ready with the expected revision; ReadySeq orders it among all the
	// watch events.
	Ready    time.Duration
	ReadySeq int
	// Started is when the layer was seen starting its last reconcile
	// before it became Ready: the first Ready=Unknown (Progressing) after a
	// Ready=False (waiting or failed) or since Begin.
	Started time.Duration
	// Failures counts the times it entered Ready=False with a failure reason;
	// Messages are their messages.
	Failures int
	Messages []string
	// Warnings counts kustomize-controller's Warning events for it (listed at
	// the end, a cross-check of Failures).
	Warnings     int
	WarningNotes []string

	failing    bool
	inProgress bool
	last       *kustomizev1.Kustomization
}

// Own is the layer's own reconcile time.
func (l *layer) Own() time.Duration { return l.Ready - l.Started }

// Observer watches every Kustomization in flux-system from the moment it is
// made, before the root objects are applied.
type Observer struct {
	c        *Cluster
	start    time.Time
	root     string
	revision string

	mu      sync.Mutex
	changed *sync.Cond
	seq     int
	layers  map[string]*layer
	werr    error
	// sourceReady is when the root OCIRepository was first seen Ready
	// with the expected revision (0 until then).
	sourceReady time.Duration
}

// Observe starts watching; call Begin before applying the root objects. root
// is the name of the root Kustomization.
func (c *Cluster) Observe(root string) *Observer {
	t := c.t
	o := &Observer{c: c, root: root, start: time.Now(), layers: map[string]*layer{}}
	o.changed = sync.NewCond(&o.mu)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var list kustomizev1.KustomizationList
	require.NoError(t, c.Client.List(ctx, &list, client.InNamespace(fluxNamespace)))
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return c.Client.Watch(ctx, &kustomizev1.KustomizationList{}, client.InNamespace(fluxNamespace), &client.ListOptions{Raw: &opts})
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			o.handle(ev)
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	c.WatchEach(&sourcev1.OCIRepositoryList{}, func(_ context.Context, obj client.Object) {
		r := obj.(*sourcev1.OCIRepository)
		if r.Namespace != fluxNamespace || r.Name != root || r.Status.Artifact == nil || !apimeta.IsStatusConditionTrue(r.Status.Conditions, meta.ReadyCondition) {
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.sourceReady == 0 && r.Status.Artifact.Revision == o.revision {
			o.sourceReady = time.Since(o.start)
		}
	})
	return o
}

// SourceReady is when the root OCIRepository was first seen Ready with
// the expected revision, from Begin (0 if not yet).
func (o *Observer) SourceReady() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sourceReady
}

// Begin makes now the start of the measured time, forgets what was seen, and
// expects revision (tag@sha256:digest) to be applied by every Ready layer.
func (o *Observer) Begin(revision string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start, o.revision = time.Now(), revision
	o.layers = map[string]*layer{}
	o.sourceReady = 0
}

func (o *Observer) handle(ev watch.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	defer o.changed.Broadcast()
	if ev.Type == watch.Error {
		o.werr = fmt.Errorf("watching Kustomizations: %v", ev.Object)
		return
	}
	k, ok := ev.Object.(*kustomizev1.Kustomization)
	if !ok || ev.Type == watch.Deleted {
		return
	}
	now := time.Since(o.start)
	o.seq++
	l := o.layers[k.Name]
	if l == nil {
		l = &layer{Name: k.Name}
		o.layers[k.Name] = l
	}
	l.last = k.DeepCopy()
	l.DependsOn = make([]string, 0, len(k.Spec.DependsOn))
	for _, d := range k.Spec.DependsOn {
		l.DependsOn = append(l.DependsOn, d.Name)
	}
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	if ready == nil {
		return
	}
	switch {
	case ready.Status == metav1.ConditionFalse && !slices.Contains(waitingReasons, ready.Reason):
		if !l.failing {
			l.Failures++
			l.Messages = append(l.Messages, ready.Reason+": "+ready.Message)
		}
		l.failing, l.inProgress = true, false
		return
	case ready.Status == metav1.ConditionFalse:
		l.inProgress = false
	case ready.Status == metav1.ConditionUnknown && ready.Reason == meta.ProgressingReason && l.ReadySeq == 0:
		if !l.inProgress {
			l.Started, l.inProgress = now, true
		}
	case ready.Status == metav1.ConditionTrue && l.ReadySeq == 0 &&
		k.Status.LastAppliedRevision == o.revision && k.Status.ObservedGeneration == k.Generation:
		l.Ready, l.ReadySeq = now, o.seq
	}
	l.failing = false
}

// WaitReady waits until every named layer is Ready with the expected
// revision, failing the test at the deadline or if a component dies.
func (o *Observer) WaitReady(names ...string) {
	t := o.c.t
	t.Helper()
	deadline := time.AfterFunc(reconcileDeadline, func() {
		o.mu.Lock()
		o.werr = fmt.Errorf("not all Ready within %s", reconcileDeadline)
		o.mu.Unlock()
		o.changed.Broadcast()
	})
	defer deadline.Stop()
	stop := context.AfterFunc(t.Context(), o.changed.Broadcast)
	defer stop()
	go func() {
		select {
		case <-o.c.broken:
			o.changed.Broadcast()
		case <-t.Context().Done():
		}
	}()

	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		var missing []string
		for _, n := range names {
			if l := o.layers[n]; l == nil || l.ReadySeq == 0 {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return
		}
		select {
		case <-o.c.broken:
			t.Fatalf("waiting for Kustomizations %v: %s", missing, o.c.brokenMsg)
		default:
		}
		if o.werr != nil || t.Context().Err() != nil {
			t.Fatalf("waiting for Kustomizations %v to be Ready at %s: %v\n%s", missing, o.revision, o.werr, o.describe(missing))
		}
		o.changed.Wait()
	}
}

// describe tells the last Ready condition of each named layer (o.mu held).
func (o *Observer) describe(names []string) string {
	var b strings.Builder
	for _, n := range names {
		l := o.layers[n]
		if l == nil || l.last == nil {
			fmt.Fprintf(&b, "  Kustomization/%s/%s: never seen\n", fluxNamespace, n)
			continue
		}
		if c := apimeta.FindStatusCondition(l.last.Status.Conditions, meta.ReadyCondition); c != nil {
			fmt.Fprintf(&b, "  Kustomization/%s/%s: Ready=%s %s: %s (applied %q)\n", fluxNamespace, n, c.Status, c.Reason, c.Message, l.last.Status.LastAppliedRevision)
		} else {
			fmt.Fprintf(&b, "  Kustomization/%s/%s: no Ready condition\n", fluxNamespace, n)
		}
	}
	return b.String()
}

// Report lists the Warning events, then returns a copy of every layer seen.
func (o *Observer) Report() map[string]*layer {
	t := o.c.t
	t.Helper()
	var events corev1.EventList
	require.NoError(t, o.c.Client.List(t.Context(), &events, client.InNamespace(fluxNamespace)))
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]*layer{}
	for n, l := range o.layers {
		cp := *l
		cp.last = nil
		cp.Warnings, cp.WarningNotes = 0, nil
		out[n] = &cp
	}
	for _, e := range events.Items {
		l := out[e.InvolvedObject.Name]
		if e.InvolvedObject.Kind != kustomizev1.KustomizationKind || e.Type != corev1.EventTypeWarning || l == nil {
			continue
		}
		if e.EventTime.Time.Before(o.start) && e.LastTimestamp.Time.Before(o.start) && e.FirstTimestamp.Time.Before(o.start) {
			continue
		}
		l.Warnings++
		l.WarningNotes = append(l.WarningNotes, e.Reason+": "+e.Message)
	}
	return out
}

// Figures is the summary of one run of a layout.
type Figures struct {
	Ready        time.Duration // until the last layer was Ready
	CriticalPath time.Duration // sum of own reconcile times on the critical path
	Path         []string      // the critical path, first layer first
	Failed       int           // failed reconciles, all layers
	Warnings     int           // Warning events, all layers
}

// Summarise computes the figures of a report; root is the root
// Kustomization, the implicit parent of layers without dependsOn.
func Summarise(layers map[string]*layer, root string) Figures {
	var f Figures
	var last *layer
	for _, l := range layers {
		f.Failed += l.Failures
		f.Warnings += l.Warnings
		if last == nil || l.ReadySeq > last.ReadySeq {
			last = l
		}
	}
	for l := last; l != nil; {
		f.Path = append([]string{l.Name}, f.Path...)
		f.CriticalPath += l.Own()
		deps := l.DependsOn
		if len(deps) == 0 && l.Name != root {
			deps = []string{root}
		}
		var next *layer
		for _, d := range deps {
			if dl := layers[d]; dl != nil && (next == nil || dl.ReadySeq > next.ReadySeq) {
				next = dl
			}
		}
		l = next
	}
	if last != nil {
		f.Ready = last.Ready
	}
	return f
}

// AssertOrder checks that every layer became Ready after all it depends on
// (by watch order, not by clock).
func AssertOrder(t *testing.T, layers map[string]*layer) {
	t.Helper()
	for _, l := range layers {
		for _, d := range l.DependsOn {
			dl := layers[d]
			require.NotNil(t, dl, "layer %q depends on %q, which was never seen", l.Name, d)
			require.Greater(t, l.ReadySeq, dl.ReadySeq, "layer %q was Ready before its dependency %q", l.Name, d)
		}
	}
}

// table is the per-layer report, in Ready order.
func table(layers map[string]*layer) string {
	ls := make([]*layer, 0, len(layers))
	for _, l := range layers {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b *layer) int { return a.ReadySeq - b.ReadySeq })
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "    %-16s ready %6.1fs  own %5.1fs  waited %5.1fs  failed %d  warnings %d  dependsOn %v\n",
			l.Name, l.Ready.Seconds(), l.Own().Seconds(), waited(layers, l).Seconds(), l.Failures, l.Warnings, l.DependsOn)
	}
	return b.String()
}

// waited is how long a layer started after the last of its dependencies
// (the root for a layer without dependsOn) was Ready: time no controller
// spent on it, which a dependency poll, a lost wake-up or a queue costs.
func waited(layers map[string]*layer, l *layer) time.Duration {
	deps := l.DependsOn
	if len(deps) == 0 && l.Name != rootName {
		deps = []string{rootName}
	}
	var last time.Duration
	for _, d := range deps {
		if dl := layers[d]; dl != nil && dl.Ready > last {
			last = dl.Ready
		}
	}
	if len(deps) == 0 || l.Started < last {
		return 0
	}
	return l.Started - last
}
