package layering

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	notifyv1 "github.com/fluxcd/notification-controller/api/v1"
	notifyv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// Receiver's resourceFilter). The objects hold no secret: the token and
// the Receiver's URL (which holds a digest of the token) are in the Secret
// that Secret returns, applied out of band. Lost events, a missing Secret or
// no notification-controller leave the layers polling, as without Wake.
type Wake struct {
	// ReceiverURL is where notification-controller reaches its own webhook
	// receiver; DefaultReceiverURL unless the stack says otherwise.
	ReceiverURL string
	Provider    *notifyv1beta3.Provider
	Alert       *notifyv1beta3.Alert
	Receiver    *notifyv1.Receiver
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

// emitWake builds the wake objects of a plan whose layers are built; nil
// when no layer has a dependency.
func (p *Plan) emitWake(receiverURL string) *Wake {
	name := wakeName(p.Name)
	ref := &meta.LocalObjectReference{Name: name}
	var sources []notifyv1.CrossNamespaceObjectReference
	var resources []notifyv1.ReceiverResource
	var entries []string
	hasDependents := map[string]bool{}
	for _, l := range p.Layers {
		for _, d := range l.DependsOn {
			hasDependents[d] = true
		}
	}
	for _, l := range p.Layers {
		if hasDependents[l.Name] {
			sources = append(sources, notifyv1.CrossNamespaceObjectReference{Kind: kustomizev1.KustomizationKind, Name: l.Name})
		}
		if len(l.DependsOn) == 0 {
			continue
		}
		resources = append(resources, notifyv1.ReceiverResource{CrossNamespaceObjectReference: notifyv1.CrossNamespaceObjectReference{
			APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind, Name: l.Name,
		}})
		deps := slices.Clone(l.DependsOn)
		slices.Sort(deps)
		entries = append(entries, fmt.Sprintf("%s: %s", celString(l.Name), celList(deps)))
	}
	if len(resources) == 0 {
		return nil
	}
	om := func() metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: p.Namespace} }
	// A reconcile is requested of a layer only when the event's object is
	// one of its dependencies: each event wakes the next layers, never the
	// one that sent it, so events cannot loop.
	filter := fmt.Sprintf("req.involvedObject.kind == 'Kustomization' && req.involvedObject.namespace == %s && req.involvedObject.name in {%s}[res.metadata.name]",
		celString(p.Namespace), strings.Join(entries, ", "))
	return &Wake{
		ReceiverURL: receiverURL,
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
				ProviderRef:   meta.LocalObjectReference{Name: name},
				EventSeverity: "info",
				EventSources:  sources,
				InclusionList: []string{wakeMessage},
			},
		},
		Receiver: &notifyv1.Receiver{
			TypeMeta:   metav1.TypeMeta{APIVersion: notifyv1.GroupVersion.String(), Kind: notifyv1.ReceiverKind},
			ObjectMeta: om(),
			Spec: notifyv1.ReceiverSpec{
				Type:           notifyv1.GenericHMACReceiver,
				Resources:      resources,
				ResourceFilter: filter,
				SecretRef:      &meta.LocalObjectReference{Name: name},
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
