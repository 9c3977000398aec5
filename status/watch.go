package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fluxpack/fluxpack/internal/errdefs"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Option configures a Watcher. Invalid options make New fail.
type Option func(*options) error

// ErrInvalidOption is wrapped by the error of an Option or WaitOption
// given a value it refuses, or given as nil.
var ErrInvalidOption = errdefs.ErrInvalidOption

type options struct {
	namespace string
	explainer Explainer
	now       func() time.Time
	plan      []Planned
}

// WithNamespace reads one namespace only (default: all).
func WithNamespace(ns string) Option {
	return func(o *options) error {
		if ns == "" {
			return errdefs.InvalidOption("WithNamespace: empty namespace")
		}
		o.namespace = ns
		return nil
	}
}

// WithExplainer attaches e's explanations to failed layers.
func WithExplainer(e Explainer) Option {
	return func(o *options) error {
		if e == nil {
			return errdefs.InvalidOption("WithExplainer: nil explainer")
		}
		o.explainer = e
		return nil
	}
}

// WithClock sets the clock that stamps snapshots (tests, examples).
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errdefs.InvalidOption("WithClock: nil clock")
		}
		o.now = now
		return nil
	}
}

// Discoverer is the discovery call a Watcher makes: one request for every
// group and resource the API serves (aggregated discovery).
type Discoverer interface {
	ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error)
}

// Watcher reads the Flux objects of a cluster.
type Watcher struct {
	dyn  dynamic.Interface
	disc Discoverer
	opts options

	mu  sync.Mutex
	err error
}

// New returns a Watcher for the cluster cfg reaches.
func New(cfg *rest.Config, opts ...Option) (*Watcher, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a client for %s: %w", cfg.Host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making a discovery client for %s: %w", cfg.Host, err)
	}
	return NewFromClients(dyn, disc, opts...)
}

// NewFromClients returns a Watcher using the given clients.
func NewFromClients(dyn dynamic.Interface, disc Discoverer, opts ...Option) (*Watcher, error) {
	w := &Watcher{dyn: dyn, disc: disc, opts: options{now: time.Now}}
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errdefs.InvalidOption("nil Option"))
			continue
		}
		if err := o(&w.opts); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("configuring the status watcher: %w", errors.Join(errs...))
	}
	return w, nil
}

// kind is one Flux kind the API serves.
type kind struct {
	gvr   schema.GroupVersionResource
	kind  string
	layer bool
}

// wanted are the kinds read, by group.
var wanted = []struct {
	group, resource, kind string
	layer                 bool
}{
	{"kustomize.toolkit.fluxcd.io", "kustomizations", KindKustomization, true},
	{"helm.toolkit.fluxcd.io", "helmreleases", KindHelmRelease, true},
	{"fluxcd.controlplane.io", "fluxinstances", KindFluxInstance, true},
	{"fluxcd.controlplane.io", "resourcesets", KindResourceSet, true},
	{"source.toolkit.fluxcd.io", "gitrepositories", KindGitRepository, false},
	{"source.toolkit.fluxcd.io", "ocirepositories", KindOCIRepository, false},
	{"source.toolkit.fluxcd.io", "helmrepositories", KindHelmRepository, false},
	{"source.toolkit.fluxcd.io", "helmcharts", KindHelmChart, false},
	{"source.toolkit.fluxcd.io", "buckets", KindBucket, false},
	{"source.toolkit.fluxcd.io", "externalartifacts", KindExternalArt, false},
}

// ErrNoFlux is returned when the API serves none of Flux's kinds.
var ErrNoFlux = errors.New("the cluster serves no Flux kind (Kustomization, HelmRelease, FluxInstance)")

// discover finds the served version of each wanted kind: the group's
// preferred version when it serves the kind, else the first that does.
func (w *Watcher) discover() ([]kind, error) {
	groups, resources, err := w.disc.ServerGroupsAndResources()
	if err != nil && len(resources) == 0 {
		return nil, fmt.Errorf("discovering the API: %w", err)
	}
	preferred := map[string]string{}
	for _, g := range groups {
		preferred[g.Name] = g.PreferredVersion.Version
	}
	served := map[string][]string{} // group/resource -> versions
	for _, rl := range resources {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			served[gv.Group+"/"+r.Name] = append(served[gv.Group+"/"+r.Name], gv.Version)
		}
	}
	var out []kind
	layers := 0
	for _, k := range wanted {
		versions := served[k.group+"/"+k.resource]
		if len(versions) == 0 {
			continue
		}
		v := versions[0]
		if slices.Contains(versions, preferred[k.group]) {
			v = preferred[k.group]
		}
		out = append(out, kind{gvr: schema.GroupVersionResource{Group: k.group, Version: v, Resource: k.resource}, kind: k.kind, layer: k.layer})
		if k.layer {
			layers++
		}
	}
	if layers == 0 {
		return nil, ErrNoFlux
	}
	return out, nil
}

func (w *Watcher) resource(k kind) dynamic.ResourceInterface {
	r := w.dyn.Resource(k.gvr)
	if w.opts.namespace != "" {
		return r.Namespace(w.opts.namespace)
	}
	return r
}

// store holds the objects read, and when each began failing.
type store struct {
	layers, sources map[Ref]Layer
	failing         map[Ref]failure
	plan            []Planned
}

type failure struct {
	message string
	since   time.Time
}

func newStore(plan []Planned) *store {
	return &store{layers: map[Ref]Layer{}, sources: map[Ref]Layer{}, failing: map[Ref]failure{}, plan: plan}
}

// put records u as seen at now; first says it comes from the first LIST,
// whose failures date from their condition's lastTransitionTime.
func (s *store) put(k kind, u *unstructured.Unstructured, now time.Time, first bool) Ref {
	l := readObject(u)
	if l.Kind == "" {
		l.Kind = k.kind
	}
	switch {
	case l.State == StateFailed || l.State == StateSourceNotReady:
		f, ok := s.failing[l.Ref]
		if !ok || f.message != l.Message {
			f = failure{message: l.Message, since: now}
			if first && !l.Since.IsZero() {
				f.since = l.Since
			}
			s.failing[l.Ref] = f
		}
		l.FailingSince = f.since
	case l.State == StateReconciling || l.State == StateUnknown:
		// A retry in progress: a failure that comes back the same
		// keeps its start.
	default:
		delete(s.failing, l.Ref)
	}
	if k.layer {
		s.layers[l.Ref] = l
	} else {
		s.sources[l.Ref] = l
	}
	return l.Ref
}

func (s *store) remove(k kind, u *unstructured.Unstructured) Ref {
	ref := Ref{Kind: k.kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	delete(s.layers, ref)
	delete(s.sources, ref)
	delete(s.failing, ref)
	return ref
}

// replace makes the objects of kind k those of a new list, and returns
// what changed: every object listed, and those no longer there.
func (s *store) replace(k kind, items []unstructured.Unstructured, at time.Time) []Ref {
	keep := map[Ref]bool{}
	var changed []Ref
	for i := range items {
		ref := s.put(k, &items[i], at, false)
		keep[ref] = true
		changed = append(changed, ref)
	}
	for _, m := range []map[Ref]Layer{s.layers, s.sources} {
		for ref := range m {
			if ref.Kind == k.kind && !keep[ref] {
				delete(m, ref)
				delete(s.failing, ref)
				changed = append(changed, ref)
			}
		}
	}
	return changed
}

func (s *store) snapshot(at time.Time, e Explainer, changed []Ref) *Snapshot {
	layers := make([]Layer, 0, len(s.layers))
	for _, l := range s.layers {
		layers = append(layers, l)
	}
	layers = append(layers, missing(s.plan, s.layers)...)
	sources := make([]Layer, 0, len(s.sources))
	for _, l := range s.sources {
		sources = append(sources, l)
	}
	snap := build(at, layers, sources, e)
	for i := range snap.Layers {
		// build may have turned a SourceNotReady layer into a Failed
		// one; FailingSince was kept for both.
		if st := snap.Layers[i].State; st != StateFailed && st != StateSourceNotReady {
			snap.Layers[i].FailingSince = time.Time{}
		}
	}
	snap.Changed = changed
	return snap
}

// list reads every object of every kind, one LIST per kind; it returns the
// resource version of each list.
func (w *Watcher) list(ctx context.Context, kinds []kind, s *store) ([]string, error) {
	rvs := make([]string, len(kinds))
	now := w.opts.now()
	for i, k := range kinds {
		list, err := w.resource(k).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.gvr.GroupResource(), err)
		}
		for j := range list.Items {
			s.put(k, &list.Items[j], now, true)
		}
		rvs[i] = list.GetResourceVersion()
	}
	return rvs, nil
}

// Snapshot reads the cluster once: discovery, then one LIST per kind.
func (w *Watcher) Snapshot(ctx context.Context) (*Snapshot, error) {
	kinds, err := w.discover()
	if err != nil {
		return nil, err
	}
	s := newStore(w.opts.plan)
	if _, err := w.list(ctx, kinds, s); err != nil {
		return nil, err
	}
	return s.snapshot(w.opts.now(), w.opts.explainer, nil), nil
}

// event is one watch event, with its kind and when it arrived; or, after
// the API server said the watch's resource version is gone (410), the
// kind's objects listed anew; or why watching the kind ended.
type event struct {
	k    kind
	ev   watch.Event
	list []unstructured.Unstructured
	err  error
	at   time.Time
}

// Watch reads the cluster as Snapshot does, then watches every kind (one
// WATCH each, resumed from the LIST's resource version, and again after a
// dropped connection; listed again, then watched from there, when the
// API server has compacted that version away) and sends a snapshot after
// each change: the first is the LIST's. The channel is closed when ctx is
// done or a watch fails; Err then says why (nil for ctx).
func (w *Watcher) Watch(ctx context.Context) (<-chan *Snapshot, error) {
	kinds, err := w.discover()
	if err != nil {
		return nil, err
	}
	s := newStore(w.opts.plan)
	rvs, err := w.list(ctx, kinds, s)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	events := make(chan event)
	var wg sync.WaitGroup
	watchers := make([]*watchtools.RetryWatcher, 0, len(kinds))
	for i, k := range kinds {
		res := w.resource(k)
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, opts)
		}}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, rvs[i], lw)
		if err != nil {
			cancel()
			for _, rw := range watchers {
				rw.Stop()
			}
			return nil, fmt.Errorf("watching %s: %w", k.gvr.GroupResource(), err)
		}
		watchers = append(watchers, rw)
		wg.Go(func() { w.follow(ctx, k, rw, lw, events) })
	}
	go func() {
		wg.Wait()
		close(events)
	}()

	out := make(chan *Snapshot, 1)
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for _, rw := range watchers {
				rw.Stop()
			}
			for range events { //nolint:revive // drain until every watcher stopped
			}
		}()
		send := func(snap *Snapshot) bool {
			select {
			case out <- snap:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !send(s.snapshot(w.opts.now(), w.opts.explainer, nil)) {
			return
		}
		for {
			var e event
			var ok bool
			select {
			case e, ok = <-events:
			case <-ctx.Done():
				return
			}
			if !ok {
				// Closed because ctx is done (the watches end with it,
				// and select may take this case first) is no error.
				if ctx.Err() == nil {
					w.setErr(errors.New("the watches ended"))
				}
				return
			}
			if e.err != nil {
				w.setErr(fmt.Errorf("watching %s: %w", e.k.gvr.GroupResource(), e.err))
				return
			}
			if e.list != nil {
				if !send(s.snapshot(e.at, w.opts.explainer, s.replace(e.k, e.list, e.at))) {
					return
				}
				continue
			}
			switch e.ev.Type {
			case watch.Error:
				w.setErr(fmt.Errorf("watching %s: %w", e.k.gvr.GroupResource(), errorOf(e.ev.Object)))
				return
			case watch.Bookmark:
				continue
			}
			u, isU := e.ev.Object.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			var ref Ref
			if e.ev.Type == watch.Deleted {
				ref = s.remove(e.k, u)
			} else {
				ref = s.put(e.k, u, e.at, false)
			}
			if !send(s.snapshot(e.at, w.opts.explainer, []Ref{ref})) {
				return
			}
		}
	}()
	return out, nil
}

// follow passes rw's events on until it ends. When the API server says
// the resource version it resumes from is gone (410: compacted while the
// connection was down), the kind is listed again (the objects sent as one
// event) and watched from the list's version; any other error ends it.
func (w *Watcher) follow(ctx context.Context, k kind, rw *watchtools.RetryWatcher, lw cache.WatcherWithContext, events chan<- event) {
	deliver := func(e event) bool {
		select {
		case events <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		gone := false
		for ev := range rw.ResultChan() {
			if ev.Type == watch.Error && expired(ev.Object) {
				gone = true
				continue // the RetryWatcher ends after it
			}
			if !deliver(event{k: k, ev: ev, at: w.opts.now()}) {
				rw.Stop()
				return
			}
		}
		if !gone || ctx.Err() != nil {
			return
		}
		list, err := w.resource(k).List(ctx, metav1.ListOptions{})
		if err != nil {
			deliver(event{k: k, err: fmt.Errorf("listing again after the watch expired: %w", err)})
			return
		}
		if !deliver(event{k: k, list: list.Items, at: w.opts.now()}) {
			return
		}
		if rw, err = watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), lw); err != nil {
			deliver(event{k: k, err: err})
			return
		}
	}
}

// Err is why the last Watch's channel closed early (nil when its context
// ended it).
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) setErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// expired reports whether a watch error is the API server's 410: the
// resource version to resume from is compacted away (as client-go's
// reflector tells it).
func expired(obj runtime.Object) bool {
	err := apierrors.FromObject(obj)
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func errorOf(obj any) error {
	if st, ok := obj.(*metav1.Status); ok {
		return errors.New(st.Message)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if msg, _, _ := unstructured.NestedString(u.Object, "message"); msg != "" {
			return errors.New(msg)
		}
	}
	return fmt.Errorf("%v", obj)
}
