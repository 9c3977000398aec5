package layering_test

import (
	"strings"
	"testing"

	notifyv1 "github.com/fluxcd/notification-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// The wake objects of a chain with a fan-in: one Provider, Alert and
// Receiver, the Alert listening to every layer something depends on, the
// Receiver reconciling every layer that depends on something, and only
// when the event's layer is one of its dependencies.
func TestWakeDependents(t *testing.T) {
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1"), layering.WakeDependents()).
		Layer("namespaces").
		Then("crds").
		Layer("sources").
		Layer("operator", layering.DependsOn("crds", "sources"), layering.MarkOperator()).
		Then("crs", layering.DependsOnOperator()).
		Build()
	require.NoError(t, err)
	require.NotNil(t, plan.Wake)
	assert.Equal(t, layering.DefaultReceiverURL, plan.Wake.ReceiverURL)

	var sources []string
	for _, s := range plan.Wake.Alert.Spec.EventSources {
		sources = append(sources, s.Kind+"/"+s.Name)
	}
	assert.Equal(t, []string{"Kustomization/namespaces", "Kustomization/crds", "Kustomization/sources", "Kustomization/operator", "Kustomization/platform-wake"}, sources,
		"the layers something depends on and the wake Kustomization, and no other")
	var woken []string
	for _, r := range plan.Wake.Receiver.Spec.Resources {
		woken = append(woken, r.Kind+"/"+r.Name)
	}
	assert.Equal(t, []string{"Kustomization/crds", "Kustomization/operator", "Kustomization/crs"}, woken)
	assert.Equal(t, "req.involvedObject.kind == 'Kustomization' && (req.involvedObject.namespace + '/' + req.involvedObject.name == 'flux-system/platform-wake' || "+
		"(req.involvedObject.namespace + '/' + req.involvedObject.name) in {'flux-system/crds': ['flux-system/namespaces'], "+
		"'flux-system/operator': ['flux-system/crds', 'flux-system/sources'], 'flux-system/crs': ['flux-system/operator']}[res.metadata.namespace + '/' + res.metadata.name])",
		plan.Wake.Receiver.Spec.ResourceFilter)

	// The wake Kustomization reconciles the rendered directory's wake/
	// (empty) and is Ready once the Receiver is.
	ks := plan.Wake.Kustomization
	assert.Equal(t, "platform-wake", ks.Name)
	assert.Equal(t, "./flux/wake", ks.Spec.Path)
	assert.Equal(t, "OCIRepository/platform", ks.Spec.SourceRef.String())
	require.Len(t, ks.Spec.HealthChecks, 1)
	assert.Equal(t, "Receiver", ks.Spec.HealthChecks[0].Kind)
	assert.True(t, layering.IsWakeKustomization(ks))
	for _, l := range plan.Layers {
		assert.NotContains(t, l.DependsOn, "platform-wake", "no layer waits for wake: without it, layers poll")
	}

	files, err := plan.Files()
	require.NoError(t, err)
	byPath := map[string]string{}
	for _, f := range files {
		byPath[f.Path] = string(f.Data)
	}
	require.Contains(t, byPath, "wake.yaml")
	assert.Contains(t, byPath["kustomization.yaml"], "- wake.yaml\n", "the root applies the wake objects with the layers")
	assert.NotContains(t, byPath["kustomization.yaml"], "wake/", "the wake Kustomization's folder is its own")
	// The Receiver is applied with the layers, not behind the wake
	// Kustomization, so that notification-controller makes it Ready while
	// the first layers reconcile; the wake Kustomization applies nothing.
	for _, kind := range []string{"Provider", "Alert", "Receiver", "Kustomization"} {
		assert.Contains(t, byPath["wake.yaml"], "\nkind: "+kind+"\n", "wake.yaml, applied with the layers, holds the %s", kind)
	}
	assert.Contains(t, byPath["wake/kustomization.yaml"], "resources: []\n")
	assert.NotContains(t, byPath, "wake/wake.yaml")
	testutil.Golden(t, "wake", []byte(byPath["wake.yaml"]+"--- wake/kustomization.yaml\n"+byPath["wake/kustomization.yaml"]))
	for p, data := range byPath {
		assert.NotContains(t, data, "/hook/", "%s holds the receiver's URL, which is as good as its token", p)
	}

	// The Secret: the token, and the Receiver's URL under the given base,
	// as notification-controller computes it.
	token := strings.Repeat("t0ken", 8)
	s, err := plan.Wake.Secret("http://127.0.0.1:9292/", token)
	require.NoError(t, err)
	assert.Equal(t, "platform-wake", s.Name)
	assert.Equal(t, "flux-system", s.Namespace)
	assert.Equal(t, token, string(s.Data["token"]))
	r := notifyv1.Receiver{}
	r.Name, r.Namespace = "platform-wake", "flux-system"
	assert.Equal(t, "http://127.0.0.1:9292"+r.GetWebhookPath(token), string(s.Data["address"]))

	_, err = plan.Wake.Secret("", "short")
	require.ErrorIs(t, err, layering.ErrInvalidOption)
	assert.ErrorContains(t, err, "Secret/flux-system/platform-wake: the token must be at least 16 characters")
	_, err = plan.Wake.Secret("ftp://x", token)
	assert.ErrorContains(t, err, `invalid receiver URL "ftp://x"`)
}

// Without dependencies there is nothing to wake; a bad receiver URL is a
// Build error, as every option's.
func TestWakeDependentsEdges(t *testing.T) {
	plan, err := layering.New("platform", layering.FromOCI("oci://r.example.com/p", "v1"), layering.WakeDependents()).Layer("a").Layer("b").Build()
	require.NoError(t, err)
	assert.Nil(t, plan.Wake)

	_, err = layering.New("platform", layering.WakeDependents(layering.ReceiverURL("webhook-receiver"), nil)).Layer("a").Build()
	require.ErrorIs(t, err, layering.ErrInvalidOption)
	assert.ErrorContains(t, err, `invalid receiver URL "webhook-receiver": the scheme must be http or https`)
	assert.ErrorContains(t, err, "WakeDependents: nil WakeOption")
}
