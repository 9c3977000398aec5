package layering_test

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

var testChart = layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "x"})

// Every option that takes a name or a path checks it: one bad input each,
// an error Build returns, wrapping ErrInvalidOption and naming the layer
// (or, for a stack option, the stack).
func TestOptionsValidateInput(t *testing.T) {
	tests := []struct {
		name  string
		stack []layering.StackOption
		step  []layering.StepOption
		where string // the layer or stack the message names
		want  string
	}{
		{name: "vars", stack: []layering.StackOption{layering.Vars("Cluster_Vars")}, where: `stack "s"`, want: `invalid vars ConfigMap name "Cluster_Vars"`},
		{name: "rendered-path-absolute", stack: []layering.StackOption{layering.RenderedPath("/flux")}, where: `stack "s"`, want: `invalid renderedPath "/flux": want a relative path`},
		{name: "rendered-path-dotdot", stack: []layering.StackOption{layering.RenderedPath("./flux/../../up")}, where: `stack "s"`, want: `invalid renderedPath "./flux/../../up": want a path inside the source, without ".."`},
		{name: "existing-namespaces", stack: []layering.StackOption{layering.ExistingNamespaces("kube.system")}, where: `stack "s"`, want: `invalid existing namespace "kube.system"`},
		{name: "existing-api-groups", stack: []layering.StackOption{layering.ExistingAPIGroups("Cert-Manager.io")}, where: `stack "s"`, want: `invalid existing API group "Cert-Manager.io"`},
		{name: "target-namespace", step: []layering.StepOption{layering.TargetNamespace("Apps")}, where: `layer "l"`, want: `invalid targetNamespace "Apps"`},
		{name: "service-account-name", step: []layering.StepOption{layering.ServiceAccountName("tenant_a")}, where: `layer "l"`, want: `invalid serviceAccountName "tenant_a"`},
		{name: "release-name-too-long", step: []layering.StepOption{layering.HelmRelease(testChart, layering.ReleaseName(strings.Repeat("r", 54)))}, where: `layer "l"`, want: `invalid releaseName "rrrr`},
		{name: "release-name", step: []layering.StepOption{layering.HelmRelease(testChart, layering.ReleaseName("My-Release"))}, where: `layer "l"`, want: `invalid releaseName "My-Release"`},
		{name: "release-namespace", step: []layering.StepOption{layering.HelmRelease(testChart, layering.ReleaseNamespace("cert.manager"))}, where: `layer "l"`, want: `invalid release namespace "cert.manager"`},
		{name: "components-url", step: []layering.StepOption{layering.Components("https://github.com/x/y//tls")}, where: `layer "l"`, want: `invalid component "https://github.com/x/y//tls": want a local path`},
		{name: "components-absolute", step: []layering.StepOption{layering.Components("/components/tls")}, where: `layer "l"`, want: `invalid component "/components/tls": want a relative path`},
		{name: "components-out-of-source", step: []layering.StepOption{layering.Path("./apps"), layering.Components("../../tls")}, where: `layer "l"`, want: `invalid component "../../tls": relative to path ./apps, it leaves the source`},
		{name: "substitute", step: []layering.StepOption{layering.Substitute(map[string]string{"cluster-name": "c1"})}, where: `layer "l"`, want: `invalid substitute variable name "cluster-name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := append([]layering.StackOption{layering.FromOCI(registry, "v1")}, tt.stack...)
			_, err := layering.New("s", stack...).Layer("l", tt.step...).Build()
			require.Error(t, err, "Build with %s", tt.name)
			assert.ErrorIs(t, err, layering.ErrInvalidPlan)
			assert.ErrorIs(t, err, layering.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.where+": "+tt.want)
		})
	}
}

// The same options take what Kubernetes, Helm and Flux take.
func TestOptionsAcceptValidInput(t *testing.T) {
	plan, err := layering.New("s", layering.FromOCI(registry, "v1"),
		layering.Vars("cluster.vars"),
		layering.RenderedPath("deploy/flux"),
		layering.ExistingNamespaces("kube-system", "apps"),
		layering.ExistingAPIGroups("cert-manager.io"),
	).
		Layer("apps", layering.Path("./apps/prod"),
			layering.TargetNamespace("apps"),
			layering.ServiceAccountName("tenant.apps"),
			layering.Components("../ingress", "../../components/tls"),
			layering.Substitute(map[string]string{"cluster_name": "c1", "_x1": "y"})).
		Then("release", layering.HelmRelease(testChart,
			layering.ReleaseName("my.release-1"),
			layering.ReleaseNamespace("cert-manager"))).
		Build()
	require.NoError(t, err)
	ks := plan.Layers[0].Kustomization
	assert.Equal(t, []string{"../ingress", "../../components/tls"}, ks.Spec.Components)
	assert.Equal(t, "tenant.apps", ks.Spec.ServiceAccountName)
	assert.Equal(t, "deploy/flux/releases/release", plan.Layers[1].Kustomization.Spec.Path)
	assert.Equal(t, "my.release-1", plan.Layers[1].HelmRelease.Spec.ReleaseName)
}
