package lint_test

import (
	"maps"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// mergeTree adds to lintTree what the merge cases need.
var mergeTree = func() map[string]string {
	files := maps.Clone(lintTree)
	files["crs-ns/store.yaml"] = crYAML + "---\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: apps}\ndata: {a: b}\n"
	files["config/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config, namespace: apps}\ndata: {a: b}\n"
	files["core-webhook/webhook.yaml"] = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: inject
webhooks:
  - name: inject.example.com
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        operations: [CREATE]
        resources: [configmaps]
`
	files["policy/vap.yaml"] = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {matchConstraints: {resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}}\n"
	return files
}()

// mergeHints lints b and returns its merge hints; every other finding
// must be absent, so each case is a platform that lints clean.
func mergeHints(t *testing.T, b *layering.Builder, files map[string]string) []lint.Finding {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, files)
	rep, err := lint.Stack(t.Context(), b, dir)
	require.NoError(t, err)
	var hints []lint.Finding
	for _, f := range rep.Findings {
		if f.Rule != lint.RuleMerge {
			continue
		}
		assert.Equal(t, lint.SeverityHint, f.Severity, "a merge hint is a hint: %s", f)
		assert.False(t, f.Fails(), "a merge hint does not fail lint: %s", f)
		require.NotNil(t, f.Merge, "a merge hint says what it merges: %s", f)
		assert.Equal(t, f.Merge.Into(), f.Layer, "the hint is about the layer the others merge into")
		hints = append(hints, f)
	}
	assert.Empty(t, failing(rep), "the case must lint clean")
	assert.Equal(t, len(hints), len(rep.Merges()))
	return hints
}

// Namespaces, then CRDs, then the custom resources without a webhook: one
// Kustomization does the same, as kustomize-controller applies the
// Namespaces and CRDs first and waits until the CRDs are established.
func TestMergeHint(t *testing.T) {
	b := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("crs", layering.Path("./crs-ns"), layering.Interval(5*60e9))
	hints := mergeHints(t, b, mergeTree)
	require.Len(t, hints, 1, "%v", hints)
	h := hints[0]
	assert.Equal(t, []string{"namespaces", "crds", "crs"}, h.Merge.Layers)
	assert.Equal(t, 2, h.Merge.Edges)
	assert.Equal(t, 2, h.Merge.CriticalEdges)
	// One line, printed on every run: the layers, what it saves, where the
	// rest is and how to turn it off; the steps and reasons are in the JSON.
	assert.Equal(t, `"namespaces" and "crds" can merge into "crs" (one Kustomization, no race), saving up to 1m0s of dependency polling in stock Flux; how and why: -o json, docs/lint-rules.md#merge; rules: {merge: off} in .fluxpack.yaml turns this hint off`, h.Message)
	assert.Contains(t, h.Merge.Why, `so "namespaces" (Namespace) and "crds" (CustomResourceDefinition) need no dependsOn`)
	assert.Equal(t, []string{
		"keep Kustomization/flux-system/crs (its name and readiness) with a path that builds the objects of ./namespaces, ./crds and ./crs-ns; dependsOn: none",
		`keep "crs"'s prune and deletionPolicy, with the annotation kustomize.toolkit.fluxcd.io/prune: disabled on the objects of "crds" (prune: false, deletionPolicy: Orphan), which keeps them as they are kept today`,
		"interval: the shortest, 5m0s",
		"before deleting Kustomization/flux-system/namespaces, set its deletionPolicy: Orphan, or its objects are garbage-collected",
	}, h.Merge.Steps)
	assert.Equal(t, "Saves up to 1m0s of dependency polling in stock Flux: the critical path loses 2 dependsOn edges × --requeue-dependency=30s", h.Merge.Saving)
	assert.Contains(t, h.String(), "[merge]")
}

// The hint can be turned off in the configuration file it names.
func TestMergeHintOff(t *testing.T) {
	b := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("crs", layering.Path("./crs-ns"))
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, mergeTree)
	testutil.WriteFiles(t, dir, map[string]string{lint.ConfigFile: "apiVersion: fluxpack.dev/v1alpha1\nkind: LintConfig\nspec:\n  rules: {merge: off}\n"})
	cfg, err := lint.LoadConfig(filepath.Join(dir, lint.ConfigFile))
	require.NoError(t, err)
	opts, err := cfg.Options()
	require.NoError(t, err)
	rep, err := lint.Stack(t.Context(), b, dir, opts...)
	require.NoError(t, err)
	assert.Empty(t, rep.Merges(), "rules: {merge: off}: %v", rep.Findings)
}

// Layers whose edge is needed are never merged.
func TestMergeHintRefused(t *testing.T) {
	crdsThen := func() *layering.Builder {
		return stack().Layer("namespaces", layering.Path("./namespaces")).Then("crds", layering.Path("./crds"), layering.KeepOnDelete())
	}
	tests := []struct {
		name string
		b    *layering.Builder
		want [][]string // the merges that remain, if any
	}{
		{
			// The operator serves the webhook of the custom resources: it
			// must run before they are applied. Its CRDs may still go
			// with it.
			name: "webhook operator",
			b:    crdsThen().Then("operator", layering.Path("./operator"), layering.MarkOperator()).Then("crs", layering.Path("./crs")),
			want: [][]string{{"namespaces", "crds", "operator"}},
		},
		{
			name: "webhook configuration",
			b:    crdsThen().Then("webhook", layering.Path("./webhook"), layering.NoWait(), layering.HealthChecks(meta.NamespacedObjectKindReference{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration", Name: "externalsecret-validate"})).Then("crs", layering.Path("./crs")),
			want: [][]string{{"namespaces", "crds", "webhook"}},
		},
		{
			// helm-controller installs the chart's CRDs after the
			// Kustomization is applied: only the HelmRelease's readiness
			// says they exist.
			name: "HelmRelease CRDs",
			b:    stack().Layer("operator", layering.Path("./operator-crds")).Then("crs", layering.Path("./crs")),
		},
		{
			// Flux reads the variables before it applies: the ConfigMap
			// must exist before the layer that substitutes from it.
			name: "variables made by the other layer",
			b: stack().Layer("vars", layering.Path("./vars")).
				Then("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
		},
		{
			name: "different sourceRef",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).Then("config", layering.Path("./config"),
				layering.SourceRef(kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "other"})),
		},
		{
			// The CRDs are kept when the layer is deleted, the namespaces
			// are not: merged into the CRDs' layer, they would be kept
			// too.
			name: "kept into pruned",
			b:    crdsThen(),
		},
		{
			name: "different targetNamespace",
			b:    stack().Layer("namespaces", layering.Path("./namespaces")).Then("config", layering.Path("./config"), layering.TargetNamespace("apps")),
		},
		{
			// Pruned when they leave the source but kept when the layer
			// is deleted: no annotation says that inside "config".
			name: "different deletionPolicy",
			b:    stack().Layer("namespaces", layering.Path("./namespaces"), layering.DeletionPolicy(layering.DeletionOrphan)).Then("config", layering.Path("./config")),
		},
		{
			// A workload waited for: what depends on it may need it
			// running.
			name: "wait on a workload",
			b:    stack().Layer("namespaces", layering.Path("./namespaces")).Then("apps", layering.Path("./apps")).Then("config", layering.Path("./config")),
			want: [][]string{{"namespaces", "apps"}},
		},
		{
			name: "health checks",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).
				Then("config", layering.Path("./config"), layering.HealthChecks(meta.NamespacedObjectKindReference{APIVersion: "v1", Kind: "ConfigMap", Name: "app-config", Namespace: "apps"})).
				Then("apps", layering.Path("./apps")),
			want: [][]string{{"namespaces", "config"}},
		},
		{
			name: "readyExpr",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).
				Then("config", layering.Path("./config"), layering.ReadyExpr("namespaces", "dep.status.observedGeneration > 0")),
		},
		{
			// The webhook would intercept the ConfigMap applied with it.
			name: "webhook on the other layer's objects",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).Then("config", layering.Path("./config")).
				Then("inject", layering.Path("./core-webhook")),
			want: [][]string{{"namespaces", "config"}},
		},
		{
			name: "admission policy",
			b:    stack().Layer("namespaces", layering.Path("./namespaces")).Then("policy", layering.Path("./policy")).Then("config", layering.Path("./config")),
			want: [][]string{{"namespaces", "policy"}},
		},
		{
			// apps depends on namespaces but not on crds: merged, it would
			// wait for the CRDs too.
			name: "another dependent",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).
				Then("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("apps", layering.Path("./config"), layering.DependsOn("namespaces")),
		},
		{
			// crs depends on namespaces and on apps, which depends on
			// namespaces: namespaces merged into crs would make a cycle
			// through apps, which waits for its workload. It can merge
			// into apps instead.
			name: "no cycle",
			b: stack().Layer("namespaces", layering.Path("./namespaces")).
				Then("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.DependsOn("namespaces")).
				Layer("apps", layering.Path("./apps"), layering.DependsOn("crds")).
				Layer("crs", layering.Path("./crs-ns"), layering.DependsOn("crds", "apps")),
			want: [][]string{{"namespaces", "crds", "apps"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			for _, h := range mergeHints(t, tt.b, mergeTree) {
				got = append(got, h.Merge.Layers)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// A merge off the critical path saves no bootstrap time, and says so: here
// either merge leaves another chain of two edges.
func TestMergeHintOffCriticalPath(t *testing.T) {
	b := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("config", layering.Path("./config")).
		Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("operator", layering.Path("./operator"), layering.MarkOperator()).
		Then("crs", layering.Path("./crs"), layering.DependsOn("config"))
	hints := mergeHints(t, b, mergeTree)
	type merge struct {
		layers               []string
		edges, criticalEdges int
	}
	var merges []merge
	for _, h := range hints {
		merges = append(merges, merge{h.Merge.Layers, h.Merge.Edges, h.Merge.CriticalEdges})
		assert.Contains(t, h.Merge.Saving, "The critical path (crds -> operator -> crs) stays as long; in stock Flux the merge saves up to ")
		assert.Contains(t, h.Message, "before \""+h.Merge.Into()+"\" is Ready (not bootstrap time)")
	}
	assert.Equal(t, []merge{
		{layers: []string{"crds", "operator"}, edges: 1},
		{layers: []string{"namespaces", "config", "crs"}, edges: 2},
	}, merges)
}

// With wake, an edge costs an event, not polling: the hint says so.
func TestMergeHintWake(t *testing.T) {
	b := layering.New("platform", layering.FromOCI(registry, "v1"), layering.WakeDependents()).
		Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("crs", layering.Path("./crs-ns"))
	hints := mergeHints(t, b, mergeTree)
	require.Len(t, hints, 1)
	assert.Equal(t, "The critical path loses 2 dependsOn edges: with wake, each costs one event through notification-controller (up to --requeue-dependency=30s each without notification-controller or the wake Secret)", hints[0].Merge.Saving)
	assert.Contains(t, hints[0].Message, "shortening the critical path by 2 dependsOn edges;")
}

// A layer that waits for a suspended one (an opt-in part of the platform,
// as import keeps an umbrella's children behind it) is held back until
// someone resumes it: a layer of the platform that does not wait for the
// suspended one must not merge into it, or its objects would be held back
// too. Layers held back by the same gate still merge.
func TestMergeKeepsSuspendedGates(t *testing.T) {
	files := map[string]string{
		"platform/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform, namespace: default}\ndata: {a: b}\n",
		"opt-in/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: opt-in, namespace: default}\ndata: {a: b}\n",
		"gpu/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gpu, namespace: default}\ndata: {a: b}\n",
		"llm/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: llm, namespace: default}\ndata: {a: b}\n",
	}
	b := stack().Layer("platform", layering.Path("./platform")).
		Layer("opt-in", layering.Path("./opt-in"), layering.Suspend()).
		Layer("gpu", layering.Path("./gpu"), layering.DependsOn("opt-in")).
		Layer("llm", layering.Path("./llm"), layering.DependsOn("platform", "gpu", "opt-in"))
	hints := mergeHints(t, b, files)
	require.Len(t, hints, 1, "%v", hints)
	assert.Equal(t, []string{"gpu", "llm"}, hints[0].Merge.Layers, "platform is not held back by opt-in: it stays a layer of its own")
}
