package layering_test

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

// The objects a stack renders carry Flux's finalizer, so that no
// controller requeues them for --min-retry-delay to add it before their
// first reconcile; with FluxDefaults (a repository's objects, rendered as
// they were) none does.
func TestFluxFinalizer(t *testing.T) {
	build := func(opts ...layering.StackOption) *layering.Plan {
		t.Helper()
		opts = append([]layering.StackOption{layering.FromOCI("oci://registry.example.com/platform", "v1"), layering.WakeDependents()}, opts...)
		plan, err := layering.New("platform", opts...).
			Layer("crds").
			Then("operator", layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "operator"}))).
			Build()
		require.NoError(t, err)
		return plan
	}
	plan := build()
	assert.Equal(t, []string{layering.FluxFinalizer}, plan.Source.Finalizers, "the stack's OCIRepository")
	for _, l := range plan.Layers {
		assert.Equal(t, []string{layering.FluxFinalizer}, l.Kustomization.Finalizers, "layer %q", l.Name)
	}
	require.NotNil(t, plan.Layers[1].HelmRelease)
	assert.Equal(t, []string{layering.FluxFinalizer}, plan.Layers[1].HelmRelease.Finalizers)
	require.NotNil(t, plan.Wake)
	assert.Equal(t, []string{layering.FluxFinalizer}, plan.Wake.Kustomization.Finalizers)
	assert.Equal(t, []string{layering.FluxFinalizer}, plan.Wake.Receiver.Finalizers)
	assert.Empty(t, plan.Wake.Provider.Finalizers, "no controller reconciles a v1beta3 Provider")
	assert.Empty(t, plan.Wake.Alert.Finalizers, "no controller reconciles a v1beta3 Alert")

	plan = build(layering.FluxDefaults())
	assert.Empty(t, plan.Source.Finalizers)
	for _, l := range plan.Layers {
		assert.Empty(t, l.Kustomization.Finalizers, "layer %q", l.Name)
	}
	assert.Empty(t, plan.Layers[1].HelmRelease.Finalizers)
}
