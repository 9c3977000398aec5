package layering

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	notifyv1 "github.com/fluxcd/notification-controller/api/v1"
	notifyv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// DefaultReceiverURL is where notification-controller's webhook receiver
// answers inside a cluster that runs Flux's standard install (the
// webhook-receiver Service of flux-system, port 80).
const DefaultReceiverURL = "http://webhook-receiver.flux-system.svc.cluster.local"

// wakeMessage matches the event kustomize-controller emits after it has
// patched a Kustomization Ready ("Reconciliation finished in 1.2s, next run
// in 10m0s", kustomization_controller.go, Reconcile's deferred func): the
// only event that says a dependency check would now pass.
const wakeMessage = "^Reconciliation finished in "

// Wake is how a Plan's layers wake their dependents in stock Flux.
// kustomize-controller does not watch dependencies: a Kustomization whose
// dependsOn is not Ready is polled again after --requeue-dependency (30s by
// default), so each dependsOn edge on the critical path costs up to 30s.
// With Wake, notification-controller (part of every Flux install) forwards
// each layer's "Reconciliation finished" event (sent once the layer is
// patched Ready) through Provider and Alert to Receiver, which requests a
// reconcile of the layers that depend on it, and only of those (the
// Receiver's resourceFilter).
//
// notification-controller drops an event that arrives before the Alert
// exists or before it has made the Receiver Ready (the Receiver answers
// 404 until then), and nothing sends it again: the first layers of a
// bootstrap can report before the objects that would forward their events.
// So the objects are applied together with the layers' Kustomizations (by
// the Kustomization that applies those), and notification-controller makes
// the Receiver Ready while the first layers reconcile; and a Kustomization
// of their own (Kustomization), which applies nothing, is Ready only once
// notification-controller has made the Receiver Ready (healthCheckExprs on
// its Ready condition), and its own "Reconciliation finished" event
// requests a reconcile of every layer that depends on another: whatever was
// lost before the Receiver was ready is made up within one health-check
// poll (5s) of it being ready. No layer depends on it, so a missing Secret
// or notification-controller only leaves the layers polling, as without
// Wake.
//
// The objects hold no secret: the token and the Receiver's URL (which holds
// a digest of the token) are in the Secret that Secret returns, applied
// out of band.
type Wake struct {
	// ReceiverURL is where notification-controller reaches its own webhook
	// receiver; DefaultReceiverURL unless the stack says otherwise.
	ReceiverURL string
	// Kustomization health-checks the Receiver; its path holds nothing.
	Kustomization *kustomizev1.Kustomization
	Provider      *notifyv1beta3.Provider
	Alert         *notifyv1beta3.Alert
	Receiver      *notifyv1.Receiver
}

// WakeTarget is where a Plan's wake objects go and what they read, for
// Plan.WakeFor. Start from DefaultWakeTarget.
type WakeTarget struct {
	// Name names the wake Kustomization, Provider, Alert, Receiver and
	// their Secret; it must not be a layer's name.
	Name string
	// Namespace is theirs (the Plan's when empty). The Receiver reaches
	// layers in other namespaces, as notification-controller allows unless
	// it runs with --no-cross-namespace-refs.
	Namespace string
	// SourceRef and Path are the folder the wake Kustomization reconciles,
	// which applies nothing (Files' objects/, such as
	// ./clusters/prod/wake/objects of GitRepository flux-system).
	SourceRef kustomizev1.CrossNamespaceSourceReference
	Path      string
	// Interval is the wake Kustomization's spec.interval. Each of its
	// reconciles requests one reconcile of every layer with dependencies.
	Interval time.Duration
	// ReceiverURL goes only into the Secret (DefaultReceiverURL when empty).
	ReceiverURL string
}

// DefaultWakeInterval is the wake Kustomization's spec.interval: each of
// its reconciles asks every layer with dependencies for one reconcile, so
// it is long.
const DefaultWakeInterval = time.Hour

// DefaultWakeTarget is the target of a repository's Plan read by package
// fluxrepo: objects named <plan>-wake in the Plan's namespace, read from
// path of the source the Plan's first (root) layer reads, reconciled
// every DefaultWakeInterval.
func DefaultWakeTarget(p *Plan, path string) WakeTarget {
	t := WakeTarget{Name: wakeName(p.Name), Namespace: p.Namespace, Path: path, Interval: DefaultWakeInterval, ReceiverURL: DefaultReceiverURL}
	if len(p.Layers) > 0 && p.Layers[0].Kustomization != nil {
		t.SourceRef = p.Layers[0].Kustomization.Spec.SourceRef
	}
	return t
}

// WakeFor returns the objects that wake the Plan's dependents (see Wake),
// built from its layers' Name, DependsOn and Kustomization as t says, or
// nil when no layer depends on another. A dependency that is not a layer
// of the Plan, or that depends on the layer itself (a cycle), is left out:
// a layer never wakes itself or one of its dependencies.
func (p *Plan) WakeFor(t WakeTarget) (*Wake, error) {
	if t.Namespace == "" {
		t.Namespace = p.Namespace
	}
	if t.ReceiverURL == "" {
		t.ReceiverURL = DefaultReceiverURL
	}
	var errs []string
	if msg := notLabel(t.Name); msg != "" {
		errs = append(errs, fmt.Sprintf("name %q: %s", t.Name, msg))
	}
	if t.SourceRef.Kind == "" || t.SourceRef.Name == "" {
		errs = append(errs, "no sourceRef: kind and name are required")
	}
	if msg := notRelative(t.Path, false); t.Path == "" || msg != "" {
		errs = append(errs, fmt.Sprintf("path %q: want a relative path inside the source", t.Path))
	}
	if t.Interval <= 0 {
		errs = append(errs, "interval: want a positive duration")
	}
	if msg := checkReceiverURL(t.ReceiverURL); msg != "" {
		errs = append(errs, fmt.Sprintf("invalid receiver URL %q: %s", t.ReceiverURL, msg))
	}
	for _, l := range p.Layers {
		if l.Kustomization != nil && l.Kustomization.Name == t.Name && p.layerNamespace(&l) == t.Namespace && !IsWakeKustomization(l.Kustomization) {
			errs = append(errs, fmt.Sprintf("name %q: layer %q has it already", t.Name, l.Name))
		}
	}
	if len(errs) > 0 {
		return nil, errdefs.Kind(ErrInvalidOption, "wake objects: %s", strings.Join(errs, "; "))
	}
	return p.emitWake(t), nil
}

// WakeRoleLabel marks the wake Kustomization (value WakeRoleValue), so
// that a repository that holds one is known to wake its dependents.
const (
	WakeRoleLabel = "fluxpack.io/role"
	WakeRoleValue = "wake"
)

// IsWakeKustomization reports whether k is a wake Kustomization written by
// fluxpack (Wake.Kustomization).
func IsWakeKustomization(k *kustomizev1.Kustomization) bool {
	return k != nil && k.Labels[WakeRoleLabel] == WakeRoleValue
}

// WakeOption configures WakeDependents. Only this package implements it.
type WakeOption interface{ applyToWake(*wakeConfig) }

type wakeConfig struct {
	receiverURL string
	err         string
}

type funcWake func(*wakeConfig)

func (f funcWake) applyToWake(c *wakeConfig) { f(c) }

// ReceiverURL sets where notification-controller reaches its webhook
// receiver (DefaultReceiverURL by default): an http or https URL without
// query or fragment. It goes only into the wake Secret.
func ReceiverURL(u string) WakeOption {
	return funcWake(func(c *wakeConfig) {
		if msg := checkReceiverURL(u); msg != "" {
			c.err = fmt.Sprintf("invalid receiver URL %q: %s", u, msg)
			return
		}
		c.receiverURL = strings.TrimSuffix(u, "/")
	})
}

// CheckReceiverURL says what is wrong with u as the URL where
// notification-controller's webhook receiver is reached, or nil.
func CheckReceiverURL(u string) error {
	if msg := checkReceiverURL(u); msg != "" {
		return errors.New(msg)
	}
	return nil
}

func checkReceiverURL(u string) string {
	p, err := url.Parse(u)
	switch {
	case err != nil:
		return err.Error()
	case p.Scheme != "http" && p.Scheme != "https":
		return "the scheme must be http or https"
	case p.Host == "":
		return "no host"
	case p.RawQuery != "" || p.Fragment != "" || p.User != nil:
		return "no user, query or fragment allowed"
	}
	return ""
}

// WakeDependents makes the stack wake each layer's dependents the moment it
// becomes Ready, with notification-controller's Provider, Alert and
// Receiver (see Wake), instead of leaving them to poll every
// --requeue-dependency. The Plan's Wake holds the objects; render writes
// them to wake.yaml, applied with the layers, and the Secret they read to
// the secret file.
func WakeDependents(opts ...WakeOption) StackOption {
	return funcStack(func(s *stack) {
		c := wakeConfig{receiverURL: DefaultReceiverURL}
		for _, o := range opts {
			if o == nil {
				s.invalidf("WakeDependents: nil WakeOption")
				continue
			}
			o.applyToWake(&c)
			if c.err != "" {
				s.invalidf("%s", c.err)
				c.err = ""
			}
		}
		s.wake = &c
	})
}

// wakeName names the wake objects and their Secret.
func wakeName(stack string) string { return stack + "-wake" }

// wakeHealth is the wake Kustomization's health check of the Receiver:
// Current once notification-controller has made it Ready (it has then
// stored the webhook path it answers on). kustomize-controller first
// requires status.observedGeneration to equal metadata.generation (a new
// Receiver's is -1, the CRD's default). There is no Failed expression: a
// Receiver not Ready yet (its Secret applied later, notification-controller
// started late) is waited for until the timeout, so the wake-up follows
// within one health-check poll (5s) of it becoming Ready.
var wakeHealth = kustomize.HealthCheckExpressions{
	Current: "has(status.conditions) && status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
}

// layerNamespace is the namespace of a layer's Kustomization.
func (p *Plan) layerNamespace(l *Layer) string {
	if l.Kustomization != nil && l.Kustomization.Namespace != "" {
		return l.Kustomization.Namespace
	}
	return p.Namespace
}

// wakeGraph is what wake follows of a Plan: the Kustomization of each
// layer (by name, the first of a name), and the dependencies of each layer
// that has any, without unknown layers, the layer itself or a layer that
// depends on it (a cycle), sorted by name.
type wakeGraph struct {
	order []string // layers with dependencies or dependents, in Plan order
	ref   map[string]types.NamespacedName
	deps  map[string][]string
	woken map[string]bool // has dependents
}

func (p *Plan) wakeGraph() *wakeGraph {
	g := &wakeGraph{ref: map[string]types.NamespacedName{}, deps: map[string][]string{}, woken: map[string]bool{}}
	idx := map[string]*Layer{}
	for i := range p.Layers {
		l := &p.Layers[i]
		if _, dup := idx[l.Name]; dup || IsWakeKustomization(l.Kustomization) {
			continue
		}
		idx[l.Name] = l
		name := l.Name
		if l.Kustomization != nil && l.Kustomization.Name != "" {
			name = l.Kustomization.Name
		}
		g.ref[l.Name] = types.NamespacedName{Namespace: p.layerNamespace(l), Name: name}
	}
	// reaches[x] holds every layer x depends on, transitively.
	reaches := map[string]map[string]bool{}
	var reach func(x string) map[string]bool
	reach = func(x string) map[string]bool {
		if r, ok := reaches[x]; ok {
			return r
		}
		r := map[string]bool{}
		reaches[x] = r // a cycle back to x sees the set being filled
		stack := []string{x}
		for len(stack) > 0 {
			y := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, d := range idx[y].DependsOn {
				if _, ok := idx[d]; ok && !r[d] {
					r[d] = true
					stack = append(stack, d)
				}
			}
		}
		return r
	}
	for i := range p.Layers {
		l := &p.Layers[i]
		if idx[l.Name] != l {
			continue
		}
		var deps []string
		for _, d := range l.DependsOn {
			if _, ok := idx[d]; !ok || d == l.Name || reach(d)[l.Name] || slices.Contains(deps, d) {
				continue
			}
			deps = append(deps, d)
		}
		if len(deps) > 0 {
			slices.Sort(deps)
			g.deps[l.Name] = deps
			for _, d := range deps {
				g.woken[d] = true
			}
		}
	}
	for i := range p.Layers {
		l := &p.Layers[i]
		if idx[l.Name] == l && (g.woken[l.Name] || len(g.deps[l.Name]) > 0) {
			g.order = append(g.order, l.Name)
		}
	}
	return g
}

// key is how the Receiver's resourceFilter names a layer.
func (g *wakeGraph) key(layer string) string {
	r := g.ref[layer]
	return r.Namespace + "/" + r.Name
}

// emitWake builds the wake objects of a plan whose layers are built; nil
// when no layer has a dependency.
func (p *Plan) emitWake(t WakeTarget) *Wake {
	g := p.wakeGraph()
	if len(g.deps) == 0 {
		return nil
	}
	ref := &meta.LocalObjectReference{Name: t.Name}
	crossRef := func(layer string) notifyv1.CrossNamespaceObjectReference {
		r := g.ref[layer]
		c := notifyv1.CrossNamespaceObjectReference{Kind: kustomizev1.KustomizationKind, Name: r.Name}
		if r.Namespace != t.Namespace {
			c.Namespace = r.Namespace
		}
		return c
	}
	var sources []notifyv1.CrossNamespaceObjectReference
	var resources []notifyv1.ReceiverResource
	var entries []string
	for _, name := range g.order {
		if g.woken[name] {
			sources = append(sources, crossRef(name))
		}
		deps := g.deps[name]
		if len(deps) == 0 {
			continue
		}
		r := crossRef(name)
		r.APIVersion = kustomizev1.GroupVersion.String()
		resources = append(resources, notifyv1.ReceiverResource{CrossNamespaceObjectReference: r})
		keys := make([]string, len(deps))
		for i, d := range deps {
			keys[i] = g.key(d)
		}
		slices.Sort(keys)
		entries = append(entries, fmt.Sprintf("%s: %s", celString(g.key(name)), celList(keys)))
	}
	sources = append(sources, notifyv1.CrossNamespaceObjectReference{Kind: kustomizev1.KustomizationKind, Name: t.Name})
	om := func() metav1.ObjectMeta { return metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace} }
	// A reconcile is requested of a layer when the event's object is one
	// of its dependencies, or the wake Kustomization (which no layer is):
	// no event wakes the layer that sent it or one of its dependencies, so
	// events cannot loop.
	filter := fmt.Sprintf("req.involvedObject.kind == 'Kustomization' && "+
		"(req.involvedObject.namespace + '/' + req.involvedObject.name == %s || "+
		"(req.involvedObject.namespace + '/' + req.involvedObject.name) in {%s}[res.metadata.namespace + '/' + res.metadata.name])",
		celString(t.Namespace+"/"+t.Name), strings.Join(entries, ", "))
	ks := &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace, Finalizers: []string{FluxFinalizer},
			Labels: map[string]string{WakeRoleLabel: WakeRoleValue}},
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: t.Interval},
			RetryInterval: &metav1.Duration{Duration: time.Minute},
			Timeout:       &metav1.Duration{Duration: 5 * time.Minute},
			Path:          t.Path,
			Prune:         true,
			SourceRef:     t.SourceRef,
			HealthChecks: []meta.NamespacedObjectKindReference{{
				APIVersion: notifyv1.GroupVersion.String(), Kind: notifyv1.ReceiverKind, Name: t.Name, Namespace: t.Namespace,
			}},
			HealthCheckExprs: []kustomize.CustomHealthCheck{{
				APIVersion: notifyv1.GroupVersion.String(), Kind: notifyv1.ReceiverKind, HealthCheckExpressions: wakeHealth,
			}},
		},
	}
	return &Wake{
		ReceiverURL:   t.ReceiverURL,
		Kustomization: ks,
		Provider: &notifyv1beta3.Provider{
			TypeMeta:   metav1.TypeMeta{APIVersion: notifyv1beta3.GroupVersion.String(), Kind: notifyv1beta3.ProviderKind},
			ObjectMeta: om(),
			// generic-hmac: the events are signed with the Secret's token,
			// which the Receiver checks.
			Spec: notifyv1beta3.ProviderSpec{Type: notifyv1beta3.GenericHMACProvider, SecretRef: ref},
		},
		Alert: &notifyv1beta3.Alert{
			TypeMeta:   metav1.TypeMeta{APIVersion: notifyv1beta3.GroupVersion.String(), Kind: notifyv1beta3.AlertKind},
			ObjectMeta: om(),
			Spec: notifyv1beta3.AlertSpec{
				ProviderRef:   meta.LocalObjectReference{Name: t.Name},
				EventSeverity: "info",
				EventSources:  sources,
				InclusionList: []string{wakeMessage},
			},
		},
		Receiver: &notifyv1.Receiver{
			TypeMeta: metav1.TypeMeta{APIVersion: notifyv1.GroupVersion.String(), Kind: notifyv1.ReceiverKind},
			// With FluxFinalizer, notification-controller makes it Ready in
			// its first reconcile, 750ms sooner.
			ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace, Finalizers: []string{FluxFinalizer}},
			Spec: notifyv1.ReceiverSpec{
				Type:           notifyv1.GenericHMACReceiver,
				Resources:      resources,
				ResourceFilter: filter,
				SecretRef:      &meta.LocalObjectReference{Name: t.Name},
			},
		},
	}
}

// celString quotes s as a CEL string literal.
func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Secret returns the Secret the wake objects read, to apply out of band
// (never to push): token signs and checks the events, address is the
// Receiver's webhook URL under receiverURL (DefaultReceiverURL when ""),
// whose path is notification-controller's digest of the token. The token
// must be at least 16 characters.
func (w *Wake) Secret(receiverURL, token string) (*corev1.Secret, error) {
	ref := "Secret/" + w.Receiver.Namespace + "/" + w.Receiver.Name
	if receiverURL == "" {
		receiverURL = w.ReceiverURL
	}
	if receiverURL == "" {
		receiverURL = DefaultReceiverURL
	}
	if msg := checkReceiverURL(receiverURL); msg != "" {
		return nil, errdefs.Kind(ErrInvalidOption, "%s: invalid receiver URL %q: %s", ref, receiverURL, msg)
	}
	if len(token) < 16 {
		return nil, errdefs.Kind(ErrInvalidOption, "%s: the token must be at least 16 characters", ref)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: w.Receiver.Name, Namespace: w.Receiver.Namespace},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"token":   []byte(token),
			"address": []byte(strings.TrimSuffix(receiverURL, "/") + w.Receiver.GetWebhookPath(token)),
		},
	}, nil
}

// Files returns the folder that holds the wake objects in a repository, in
// this order: kustomization.yaml (listing wake.yaml: add the folder to the
// cluster's entry point), wake.yaml (Provider, Alert, Receiver and the wake
// Kustomization, all applied by the entry point's Kustomization together
// with the layers) and objects/kustomization.yaml, the folder the wake
// Kustomization reconciles (its spec.path must name it), which lists
// nothing: the wake Kustomization only health-checks the Receiver. The
// Secret is not among them (see Secret).
func (w *Wake) Files() ([]File, error) { return w.files("objects") }

// files renders wake.yaml and the wake Kustomization's folder, named
// objects: the objects are applied by whatever applies wake.yaml, so that
// notification-controller makes the Receiver Ready while the first layers
// reconcile, not only once the wake Kustomization has applied it (a fresh
// cluster's first wake-up was lost to that, and made up only when the wake
// Kustomization's health check passed, ~5s later).
func (w *Wake) files(objects string) ([]File, error) {
	var docs [][]byte
	for _, obj := range []any{w.Provider, w.Alert, w.Receiver, w.Kustomization} {
		data, err := marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("rendering wake.yaml: %w", err)
		}
		docs = append(docs, data)
	}
	list := func(header string, resources ...string) ([]byte, error) {
		k, err := sigyaml.Marshal(struct {
			APIVersion string   `json:"apiVersion"`
			Kind       string   `json:"kind"`
			Resources  []string `json:"resources"`
		}{"kustomize.config.k8s.io/v1beta1", "Kustomization", resources})
		return append([]byte(header), k...), err
	}
	header := "# Written by fluxpack from the dependsOn of the Kustomizations (wake). Do not edit: run fluxpack again.\n"
	top, err := list(header, "wake.yaml")
	if err != nil {
		return nil, err
	}
	inner, err := list(header+"# The wake Kustomization applies nothing: wake.yaml's Receiver is applied with the layers; it health-checks it.\n", []string{}...)
	if err != nil {
		return nil, err
	}
	return []File{
		{Path: "kustomization.yaml", Data: top},
		{Path: "wake.yaml", Data: bytes.Join(docs, []byte("---\n"))},
		{Path: objects + "/kustomization.yaml", Data: inner},
	}, nil
}
