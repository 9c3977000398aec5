package layering_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

const registry = "oci://registry.example.com/platform"

func renderPlan(t *testing.T, p *layering.Plan) []byte {
	t.Helper()
	files, err := p.Files()
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		b.WriteString("--- " + f.Path + "\n")
		b.Write(f.Data)
	}
	return []byte(b.String())
}

func TestBuildErrorsAllAtOnce(t *testing.T) {
	_, err := layering.New("platform", layering.FromOCI(registry, "v1")).
		Layer("Operator").
		Then("crs", layering.DependsOn("cert-manager")).
		Layer("crs").
		Layer("a", layering.DependsOn("c")).
		Layer("b", layering.DependsOn("a")).
		Layer("c", layering.DependsOn("b")).
		Layer("self", layering.DependsOn("self")).
		Layer("bad", layering.Interval(0), layering.DeletionPolicy(layering.Deletion("Sometimes"))).
		Build()
	require.Error(t, err)
	assert.ErrorIs(t, err, layering.ErrInvalidPlan)
	for _, kind := range []error{layering.ErrInvalidName, layering.ErrDuplicateLayer, layering.ErrUnknownDependency, layering.ErrCycle, layering.ErrInvalidOption} {
		assert.ErrorIs(t, err, kind)
	}
	var le *layering.LayerError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "Operator", le.Layer, "the first problem is the first layer's")
	testutil.Golden(t, "build-errors", []byte(err.Error()+"\n"))
}

func TestBuildNeverPanics(t *testing.T) {
	var nilStep layering.StepOption
	var nilStack layering.StackOption
	var nilPreset layering.Preset
	_, err := layering.New("", nilStack).Then("x", nilStep).Add(nilPreset).Layer("y", layering.HelmRelease(nil)).Build()
	require.Error(t, err)
	assert.ErrorIs(t, err, layering.ErrInvalidOption)
	assert.ErrorIs(t, err, layering.ErrInvalidName)
}

func TestBuildOptionConflicts(t *testing.T) {
	hc := meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "op", Namespace: "op"}
	tests := []struct {
		name string
		opt  []layering.StepOption
		want string
	}{
		{"wait-and-health-checks", []layering.StepOption{layering.Wait(), layering.HealthChecks(hc)}, "wait: true makes Flux ignore healthChecks"},
		{"guard-and-wait", []layering.StepOption{layering.Wait(), layering.WebhookGuard(layering.ValidatingWebhook, "x"), layering.HealthChecks(hc)}, "WebhookGuard uses health checks"},
		{"guard-without-workload", []layering.StepOption{layering.WebhookGuard(layering.ValidatingWebhook, "x")}, "add HealthChecks on the operator's workload"},
		{"guard-bad-kind", []layering.StepOption{layering.WebhookGuard(layering.WebhookKind("Deployment"), "x")}, `invalid webhook guard kind "Deployment"`},
		{"helm-no-chart", []layering.StepOption{layering.HelmRelease()}, "exactly one of ChartRef and Chart"},
		{"helm-with-path", []layering.StepOption{layering.Path("./x"), layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "x"}))}, "takes no Path"},
		{"helm-bad-crds", []layering.StepOption{layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "x"}), layering.CRDs("Maybe"))}, `invalid crds policy "Maybe"`},
		{"ready-expr-not-a-dep", []layering.StepOption{layering.ReadyExpr("other", "dep.status.ready")}, `readyExpr for "other", which is not a dependency`},
		{"operator-missing", []layering.StepOption{layering.DependsOnOperator()}, "no earlier layer is marked as an operator"},
		{"empty-path", []layering.StepOption{layering.Path("")}, "empty path"},
		{"bad-substitute-from", []layering.StepOption{layering.SubstituteFrom(kustomizeRef("Deployment", "x"))}, "invalid substituteFrom Deployment/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := layering.New("s", layering.FromOCI(registry, "v1")).Layer("l", tt.opt...).Build()
			require.Error(t, err, "Build of a layer with %s", tt.name)
			assert.ErrorIs(t, err, layering.ErrInvalidPlan)
			assert.Contains(t, err.Error(), `layer "l": `)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestBuildStackErrors(t *testing.T) {
	_, err := layering.New("s").Layer("l").Build()
	require.ErrorIs(t, err, layering.ErrInvalidOption)
	assert.Contains(t, err.Error(), `stack "s": no source`)
	_, err = layering.New("s", layering.FromOCI("https://x/y", "v1")).Layer("l").Build()
	assert.ErrorContains(t, err, `invalid source url "https://x/y"`)
	_, err = layering.New("s", layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: "Secret", Name: "x"})).Layer("l").Build()
	assert.ErrorContains(t, err, `invalid source kind "Secret"`)
	_, err = layering.New("s", layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository"})).Layer("l").Build()
	assert.ErrorContains(t, err, `stack "s": source GitRepository: a name is required`)
	_, err = layering.New("s", layering.FromOCI(registry, "v1")).Then("first").Build()
	assert.ErrorIs(t, err, layering.ErrUnknownDependency)
}

func TestOperatorPreset(t *testing.T) {
	plan, err := layering.New("external-secrets", layering.FromOCI(registry, "v1")).
		Layer("namespaces").
		Add(layering.Operator("external-secrets",
			layering.CRDsLayer(layering.DependsOn("namespaces")),
			layering.OperatorLayer(layering.HelmRelease(
				layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "external-secrets-chart"}),
				layering.ReleaseNamespace("external-secrets"),
				layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "external-secrets-values"}),
			)),
		)).
		Then("apps").
		Build()
	require.NoError(t, err)
	require.Len(t, plan.Layers, 5)
	crds, op, crs := plan.Layers[1], plan.Layers[2], plan.Layers[3]
	assert.False(t, crds.Kustomization.Spec.Prune, "CRDs are never pruned")
	assert.True(t, crds.Kustomization.Spec.Wait)
	assert.Equal(t, []string{"external-secrets-crds"}, op.DependsOn)
	assert.True(t, op.Operator)
	assert.True(t, op.Kustomization.Spec.Wait)
	require.NotNil(t, op.HelmRelease)
	assert.Equal(t, helmv2.Skip, op.HelmRelease.Spec.Install.CRDs, "the CRDs have their own layer")
	assert.Equal(t, "./flux/releases/external-secrets-operator", op.Kustomization.Spec.Path)
	assert.Equal(t, []string{"external-secrets-operator"}, crs.DependsOn, "CRs wait for the operator, not just the CRDs")
	assert.Equal(t, time.Minute, crs.Kustomization.Spec.RetryInterval.Duration)
	assert.Equal(t, []string{"external-secrets-crs"}, plan.Layers[4].DependsOn)
	testutil.Golden(t, "operator-preset", renderPlan(t, plan))
}

func TestOperatorWebhookGuard(t *testing.T) {
	plan, err := layering.New("cert-manager", layering.FromOCI(registry, "v1")).
		Add(layering.Operator("cert-manager",
			layering.OperatorLayer(layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "cert-manager", Version: "1.x", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "jetstack"}}))),
			layering.OperatorWebhook(layering.ValidatingWebhook, "cert-manager-webhook"),
		)).
		Build()
	require.NoError(t, err)
	ks := plan.Layers[1].Kustomization.Spec
	assert.False(t, ks.Wait, "Flux ignores health checks under wait")
	require.Len(t, ks.HealthChecks, 2)
	assert.Equal(t, "HelmRelease", ks.HealthChecks[0].Kind)
	assert.Equal(t, "ValidatingWebhookConfiguration", ks.HealthChecks[1].Kind)
	require.Len(t, ks.HealthCheckExprs, 1)
	assert.Contains(t, ks.HealthCheckExprs[0].Current, "caBundle")
	testutil.Golden(t, "webhook-guard", renderPlan(t, plan))
}

func TestDefaultsAreVisible(t *testing.T) {
	plan, err := layering.New("s", layering.FromOCI(registry, "v1")).Layer("l").Build()
	require.NoError(t, err)
	out := string(renderPlan(t, plan))
	for _, field := range []string{"interval: 10m0s", "retryInterval: 2m0s", "timeout: 5m0s", "prune: true", "wait: true", "deletionPolicy: MirrorPrune", "path: ./l"} {
		assert.Contains(t, out, field)
	}
	assert.NotContains(t, out, "creationTimestamp")
	assert.NotContains(t, out, "status")
}

func TestWriteDir(t *testing.T) {
	plan, err := layering.New("s", layering.FromOCI(registry, "v1")).Layer("a").Then("b").Build()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, render.WriteDir(plan, dir))
	first := testutil.ReadFiles(t, dir)
	assert.Equal(t, []string{"kustomization.yaml", "layers/a.yaml", "layers/b.yaml", "source.yaml"}, testutil.SortedKeys(first))
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "not the 0700 of a temp dir")

	// A new render replaces the previous one whole, byte for byte the same.
	plan2, err := layering.New("s", layering.FromOCI(registry, "v1")).Layer("a").Build()
	require.NoError(t, err)
	require.NoError(t, render.WriteDir(plan2, dir))
	assert.NotContains(t, testutil.ReadFiles(t, dir), "layers/b.yaml")
	require.NoError(t, render.WriteDir(plan, dir))
	assert.Equal(t, first, testutil.ReadFiles(t, dir))

	// A directory holding anything else is refused, and left alone.
	other := t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"notes.txt": "mine"})
	err = render.WriteDir(plan, other)
	require.ErrorContains(t, err, "refusing to replace a directory holding notes.txt")
	assert.Equal(t, map[string]string{"notes.txt": "mine"}, testutil.ReadFiles(t, other))
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary directory left behind")
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := layering.New("s", layering.FromOCI(registry, "v1")).Layer("a", layering.DependsOn("zz")).Build()
	var le *layering.LayerError
	require.True(t, errors.As(err, &le))
	assert.Equal(t, "a", le.Layer)
	assert.ErrorIs(t, le, layering.ErrUnknownDependency)
	assert.Equal(t, `layer "a": depends on unknown layer "zz"`, le.Error())
}

func TestOperatorPresetPaths(t *testing.T) {
	plan, err := layering.New("s", layering.FromOCI(registry, "v1")).
		Add(layering.Operator("es", layering.CRsLayer(layering.Path("./mine")))).
		Build()
	require.NoError(t, err)
	assert.Equal(t, "./es/crds", plan.Layers[0].Kustomization.Spec.Path)
	assert.Equal(t, "./es/operator", plan.Layers[1].Kustomization.Spec.Path)
	assert.Equal(t, "./mine", plan.Layers[2].Kustomization.Spec.Path)

	_, err = layering.New("s", layering.FromOCI(registry, "v1")).
		Add(layering.Operator("es", layering.OperatorLayer(layering.Path("./op"), layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "es"}))))).
		Build()
	require.ErrorContains(t, err, "takes no Path", "an explicit path on a HelmRelease operator is refused, not dropped")
}
