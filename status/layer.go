package status

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// State is what a layer is doing.
type State string

// The states of a layer or a source.
const (
	StateReady          State = "Ready"
	StateReconciling    State = "Reconciling"
	StateWaitingOn      State = "WaitingOn"
	StateSourceNotReady State = "SourceNotReady"
	StateFailed         State = "Failed"
	StateSuspended      State = "Suspended"
	// StateUnknown: no Ready condition yet (a controller has not
	// picked the object up).
	StateUnknown State = "Unknown"
)

// Steps of a Reconciling layer.
const (
	StepApplying       = "applying"
	StepHealthChecking = "health-checking"
)

// Ref names a Flux object.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is Kind/namespace/name.
func (r Ref) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// Layer is one Flux object as the cluster reports it. Sources are Layers
// too (Snapshot.Sources), with no dependencies.
type Layer struct {
	Ref
	State State `json:"state"`
	// Step is applying or health-checking for a Reconciling layer.
	Step string `json:"step,omitempty"`
	// WaitingOn are the dependencies (namespace/name) not Ready, for
	// WaitingOn; a dependency that does not exist is among them.
	WaitingOn []string `json:"waitingOn,omitempty"`
	// DependsOn is spec.dependsOn (namespace/name, same kind).
	DependsOn []string `json:"dependsOn,omitempty"`
	// Reason and Message are the Ready condition's.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Since is the Ready condition's lastTransitionTime.
	Since time.Time `json:"since,omitzero"`
	// FailingSince is when the layer was first seen failing with
	// Message (a retry that fails the same way does not reset it); zero
	// unless Failed.
	FailingSince time.Time `json:"failingSince,omitzero"`
	// Terminal: a failure that will not heal without a change: Stalled=True,
	// or a build failure of the revision its source serves.
	Terminal bool `json:"terminal,omitempty"`
	// Applied is status.lastAppliedRevision (a HelmRelease's
	// lastAttemptedRevision: its chart version); Attempted is
	// status.lastAttemptedRevision.
	Applied   string `json:"applied,omitempty"`
	Attempted string `json:"attempted,omitempty"`
	// Source is the source a Kustomization reads (spec.sourceRef) or a
	// HelmRelease's spec.chartRef; SourceRevision is its
	// status.artifact.revision.
	Source         *Ref   `json:"source,omitempty"`
	SourceRevision string `json:"sourceRevision,omitempty"`
	// URL is a source's spec.url (oci://host/repository for an
	// OCIRepository); "" for a layer.
	URL string `json:"url,omitempty"`
	// AppliedBy is the Kustomization that applied the object
	// (namespace/name, from kustomize-controller's labels), "" when none.
	AppliedBy string `json:"appliedBy,omitempty"`
	// Created is the object's creationTimestamp; ReconcileDuration is
	// how long its last successful reconcile of the current content took
	// (status.history, kustomize-controller ≥ v1.5), 0 when unknown. Both
	// let Reconstruct draw a timeline after the fact.
	Created           time.Time     `json:"created,omitzero"`
	ReconcileDuration time.Duration `json:"reconcileDuration,omitempty"`
	// Ready: the Ready condition is True (a suspended layer keeps the
	// condition of its last reconcile).
	Ready bool `json:"ready"`
	// Current: the controller observed the current generation.
	Current bool `json:"current"`
	// Explanation is set for a Failed layer whose message a rule explains.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Key is namespace/name, how dependsOn names a layer.
func (r Ref) Key() string { return r.Namespace + "/" + r.Name }

// UpToDate reports whether the layer is Ready and applied want: its
// source's current revision when want is "", matched whole or by its digest
// (a want of sha256:… matches tag@sha256:…). A suspended layer is up to
// date when its last reconcile was. Only Kustomizations and FluxInstances
// report a revision comparable to a source's; other layers are up to date
// once Ready for their generation.
func (l *Layer) UpToDate(want string) bool {
	if (l.State != StateReady && l.State != StateSuspended) || !l.Ready || !l.Current {
		return false
	}
	if l.Kind != KindKustomization {
		return true
	}
	return l.hasApplied(want)
}

// hasApplied reports whether the Kustomization l last applied want (the
// revision its source serves when "").
func (l *Layer) hasApplied(want string) bool {
	if want == "" {
		want = l.SourceRevision
	}
	if want == "" {
		return true
	}
	return l.Applied == want || strings.HasSuffix(l.Applied, "@"+want)
}

// Explanation says which lint rule explains a failure, and how to fix it.
type Explanation struct {
	Rule string `json:"rule"`
	// Edge is the missing dependsOn, as "layer -> dependency", when
	// known.
	Edge string `json:"edge,omitempty"`
	Fix  string `json:"fix,omitempty"`
	// Finding is the explainer's text (a lint finding with its file and
	// line), when one was given.
	Finding string `json:"finding,omitempty"`
}

// Query is what an Explainer is asked about: a failed layer, its message,
// and the rule Classify found for it ("" when none).
type Query struct {
	Layer   Ref
	Message string
	Rule    string
}

// Explainer attaches what a caller knows about a failure (the finding lint
// made on the tree the cluster runs). It returns false when it knows
// nothing; the built-in explanation (Classify and a generic fix) stays.
type Explainer interface {
	Explain(Query) (Explanation, bool)
}

// ExplainFunc is an Explainer as a function.
type ExplainFunc func(Query) (Explanation, bool)

// Explain calls f.
func (f ExplainFunc) Explain(q Query) (Explanation, bool) { return f(q) }

// Lint rule names the failures map to (package lint's names).
const (
	RuleWebhookOrder   = "webhook-order"
	RuleCRDOrder       = "crd-order"
	RuleNamespaceOrder = "namespace-order"
	RuleHealthCheck    = "health-check"
)

// namespaceNotFound and rulePatterns are compiled on first use: an init
// that compiles them would cost every command of the CLI.
var (
	namespaceNotFound = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`namespaces "([^"]+)" not found`) })
	rulePatterns      = sync.OnceValue(func() []rulePattern {
		return []rulePattern{
			{RuleWebhookOrder, regexp.MustCompile(`failed calling webhook|no endpoints available for service|failed to call webhook`)},
			{RuleCRDOrder, regexp.MustCompile(`no matches for kind|ensure CRDs are installed first|the server could not find the requested resource`)},
			{RuleNamespaceOrder, namespaceNotFound()},
			{RuleHealthCheck, regexp.MustCompile(`(?i)health check failed|timeout waiting for|context deadline exceeded.*health|HealthCheckFailed`)},
		}
	})
)

type rulePattern struct {
	rule string
	re   *regexp.Regexp
}

var (
	fixes = map[string]string{
		RuleWebhookOrder:   "make the layer depend on the layer that runs the webhook's operator, and have that layer wait for it (wait: true or a health check on its Deployment)",
		RuleCRDOrder:       "make the layer depend on the layer that applies the CRD",
		RuleNamespaceOrder: "make the layer depend on the layer that creates the namespace, or create it in this layer",
		RuleHealthCheck:    "the checked objects never became healthy: look at their own status, and make the layer depend on the layers they need",
	}
)

// Classify maps a controller message (and Ready reason) to the lint rule
// that explains such a failure, or "" when none does.
func Classify(reason, message string) string {
	for _, p := range rulePatterns() {
		if p.re.MatchString(message) {
			return p.rule
		}
	}
	if reason == "HealthCheckFailed" {
		return RuleHealthCheck
	}
	return ""
}

// explain is the built-in explanation of a message, refined by e.
func explain(e Explainer, ref Ref, reason, message string) *Explanation {
	rule := Classify(reason, message)
	var out *Explanation
	if rule != "" {
		out = &Explanation{Rule: rule, Fix: fixes[rule]}
		if m := namespaceNotFound().FindStringSubmatch(message); m != nil && rule == RuleNamespaceOrder {
			out.Fix = fmt.Sprintf("make the layer depend on the layer that creates namespace %q, or create it in this layer", m[1])
		}
	}
	if e != nil {
		if x, ok := e.Explain(Query{Layer: ref, Message: message, Rule: rule}); ok {
			if x.Rule == "" && out != nil {
				x.Rule = out.Rule
			}
			if x.Fix == "" && out != nil {
				x.Fix = out.Fix
			}
			out = &x
		}
	}
	return out
}

// Kinds.
const (
	KindKustomization  = "Kustomization"
	KindHelmRelease    = "HelmRelease"
	KindFluxInstance   = "FluxInstance"
	KindResourceSet    = "ResourceSet"
	KindGitRepository  = "GitRepository"
	KindOCIRepository  = "OCIRepository"
	KindHelmRepository = "HelmRepository"
	KindHelmChart      = "HelmChart"
	KindBucket         = "Bucket"
	KindExternalArt    = "ExternalArtifact"
)

// condition is the part of a status condition read here.
type condition struct {
	Type, Status, Reason, Message string
	LastTransitionTime            time.Time
}

func conditions(u *unstructured.Unstructured) map[string]condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := map[string]condition{}
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		c := condition{Type: str(m["type"]), Status: str(m["status"]), Reason: str(m["reason"]), Message: str(m["message"])}
		if ts := str(m["lastTransitionTime"]); ts != "" {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(ts); err == nil {
				c.LastTransitionTime = t.UTC()
			}
		}
		out[c.Type] = c
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// readObject reads what the object says of itself; the states that need
// other objects (WaitingOn's names, SourceNotReady) are settled by
// Snapshot.resolve.
func readObject(u *unstructured.Unstructured) Layer {
	l := Layer{Ref: Ref{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}}
	obs, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	l.Current = obs == u.GetGeneration()
	l.Applied, _, _ = unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	l.Attempted, _, _ = unstructured.NestedString(u.Object, "status", "lastAttemptedRevision")
	if l.Kind == KindHelmRelease && l.Applied == "" {
		l.Applied = l.Attempted
	}
	if l.Kind != KindKustomization && l.Kind != KindHelmRelease {
		l.URL, _, _ = unstructured.NestedString(u.Object, "spec", "url")
	}
	if rev, ok, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision"); ok {
		l.SourceRevision = rev // a source's own revision
	}
	deps, _, _ := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
	for _, d := range deps {
		m, ok := d.(map[string]any)
		if !ok {
			continue
		}
		ns := str(m["namespace"])
		if ns == "" {
			ns = u.GetNamespace()
		}
		l.DependsOn = append(l.DependsOn, ns+"/"+str(m["name"]))
	}
	l.Source = sourceOf(u)
	l.Created = u.GetCreationTimestamp().UTC()
	if hist, _, _ := unstructured.NestedSlice(u.Object, "status", "history"); len(hist) > 0 {
		if h, ok := hist[0].(map[string]any); ok && str(h["lastReconciledStatus"]) == "ReconciliationSucceeded" {
			if d, err := time.ParseDuration(str(h["lastReconciledDuration"])); err == nil {
				l.ReconcileDuration = d
			}
		}
	}
	if labels := u.GetLabels(); labels["kustomize.toolkit.fluxcd.io/name"] != "" {
		l.AppliedBy = labels["kustomize.toolkit.fluxcd.io/namespace"] + "/" + labels["kustomize.toolkit.fluxcd.io/name"]
	}

	conds := conditions(u)
	ready, hasReady := conds["Ready"]
	l.Reason, l.Message, l.Since = ready.Reason, ready.Message, ready.LastTransitionTime
	l.Ready = hasReady && ready.Status == "True"
	suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	switch {
	case suspended:
		l.State = StateSuspended
	case !hasReady:
		l.State = StateUnknown
		if obs != 0 || u.GetGeneration() == 0 {
			l.State = StateReconciling
		}
	case ready.Status == "True" && l.Current:
		l.State = StateReady
	case ready.Status == "True" || ready.Status == "Unknown":
		l.State = StateReconciling
	case ready.Reason == "DependencyNotReady":
		l.State = StateWaitingOn
	case ready.Reason == "ArtifactFailed" || ready.Reason == "SourceNotReady" || ready.Reason == "HelmChartNotReady":
		// Settled in resolve: SourceNotReady while the source is not
		// Ready, else Failed (an artifact that does not build, say).
		l.State = StateSourceNotReady
	default:
		l.State = StateFailed
	}
	if l.State == StateReconciling {
		l.Step = StepApplying
		if h, ok := conds["Healthy"]; ok && h.Status == "Unknown" {
			l.Step = StepHealthChecking
		}
	}
	if l.State == StateFailed {
		if s, ok := conds["Stalled"]; ok && s.Status == "True" {
			l.Terminal = true
		}
	}
	return l
}

// sourceOf is the source a layer reads.
func sourceOf(u *unstructured.Unstructured) *Ref {
	ref := func(path ...string) *Ref {
		m, ok, _ := unstructured.NestedMap(u.Object, path...)
		if !ok {
			return nil
		}
		r := &Ref{Kind: str(m["kind"]), Namespace: str(m["namespace"]), Name: str(m["name"])}
		if r.Namespace == "" {
			r.Namespace = u.GetNamespace()
		}
		return r
	}
	switch u.GetKind() {
	case KindKustomization:
		return ref("spec", "sourceRef")
	case KindHelmRelease:
		if r := ref("spec", "chartRef"); r != nil {
			return r
		}
		// helm-controller makes HelmChart <namespace>-<name> in the
		// source's namespace.
		if r := ref("spec", "chart", "spec", "sourceRef"); r != nil {
			return &Ref{Kind: KindHelmChart, Namespace: r.Namespace, Name: u.GetNamespace() + "-" + u.GetName()}
		}
	}
	return nil
}
