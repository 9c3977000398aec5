package lint_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

const (
	crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clustersecretstores.external-secrets.io
spec:
  group: external-secrets.io
  names: {kind: ClusterSecretStore, plural: clustersecretstores}
  scope: Cluster
  versions: [{name: v1, served: true, storage: true}]
`
	crYAML = `apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata:
  name: vault
spec:
  provider: {vault: {server: "https://vault.example.com"}}
`
	releaseYAML = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: external-secrets
  namespace: flux-system
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: external-secrets}
  install: {crds: Skip}
`
	releaseCRDsYAML = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: external-secrets
  namespace: flux-system
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: external-secrets}
`
	// The chart source of the releases above: the table of known operators
	// knows the chart by the last element of its URL.
	chartSourceYAML = `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: external-secrets
  namespace: flux-system
spec:
  interval: 10m
  url: oci://ghcr.io/external-secrets/charts/external-secrets
  ref: {tag: 0.10.0}
`
	// A release of a chart lint neither has nor finds in its table.
	unknownReleaseYAML = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: some-app
  namespace: flux-system
spec:
  interval: 10m
  chart: {spec: {chart: some-app, sourceRef: {kind: HelmRepository, name: charts}}}
`
	webhookYAML = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: externalsecret-validate
webhooks:
  - name: validate.clustersecretstore.external-secrets.io
    rules:
      - apiGroups: [external-secrets.io]
        apiVersions: [v1]
        operations: [CREATE, UPDATE]
        resources: [clustersecretstores]
`
	nsYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: apps
`
	deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`
)

// tree is the platform every lint test reads; each test picks its layers.
var lintTree = map[string]string{
	"crds/crd.yaml":                 crdYAML,
	"operator/release.yaml":         releaseYAML,
	"operator/source.yaml":          chartSourceYAML,
	"operator-crds/release.yaml":    releaseCRDsYAML,
	"operator-crds/source.yaml":     chartSourceYAML,
	"app-release/release.yaml":      unknownReleaseYAML,
	"webhook/webhook.yaml":          webhookYAML,
	"crs/store.yaml":                crYAML,
	"mixed/crd.yaml":                crdYAML,
	"mixed/store.yaml":              crYAML,
	"helm-and-crs/release.yaml":     releaseCRDsYAML,
	"helm-and-crs/source.yaml":      chartSourceYAML,
	"helm-and-crs/store.yaml":       crYAML,
	"namespaces/ns.yaml":            nsYAML,
	"apps/deploy.yaml":              deployYAML,
	"values/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-values, namespace: flux-system}\ndata: {values.yaml: \"replicas: 2\"}\n",
	"kustomized/kustomization.yaml": "resources: [deploy.yaml]\nnamePrefix: team-\n",
	"kustomized/deploy.yaml":        "# the web app\n" + deployYAML,
	"remote/kustomization.yaml":     "resources: [\"REMOTE\"]\n",
	"twice/a.yaml":                  deployYAML,
	"vars/cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-vars, namespace: flux-system}\ndata: {domain: example.com}\n",
	"uses-vars/gw.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gw, namespace: default}\ndata: {host: \"*.${domain}\"}\n",
	"checked/deploy.yaml":           deployYAML,
	"twice/b.yaml":                  "# the same Deployment again\n" + deployYAML,
	"repeated/kustomization.yaml":   "resources: [deploy.yaml]\n",
	"repeated/deploy.yaml":          deployYAML + "  replicas: 2\n" + "  replicas: 3\n",
}

func lintStack(t *testing.T, b *layering.Builder, files map[string]string, opts ...lint.Option) []lint.Finding {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, files)
	rep, err := lint.Stack(t.Context(), b, dir, opts...)
	require.NoError(t, err)
	return failing(rep)
}

func rules(fs []lint.Finding) []lint.Rule {
	var out []lint.Rule
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

func stack() *layering.Builder {
	return layering.New("platform", layering.FromOCI(registry, "v1"))
}

// Each rule: a stack that breaks it (the rule must report it, naming the
// layer, the object and file:line) and the fixed stack (no finding).
func TestLintRules(t *testing.T) {
	tests := []struct {
		name      string
		bad, good *layering.Builder
		rule      lint.Rule
		want      lint.Finding // the first finding of rule; Message is a substring
	}{
		{
			name: "graph",
			bad:  stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.DependsOn("nothing")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()),
			rule: lint.RuleGraph,
			want: lint.Finding{Layer: "crds", Message: `depends on unknown layer "nothing"`},
		},
		{
			// Flux applies ${domain} as written in a layer without
			// postBuild; domain is a variable of the platform (another
			// layer substitutes it), so the intent is plain.
			name: "no-postbuild",
			bad: stack().Layer("vars", layering.Path("./vars")).
				Then("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})).
				Then("plain", layering.Path("./uses-vars"), layering.TargetNamespace("other")),
			good: stack().Layer("vars", layering.Path("./vars")).
				Then("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})).
				Then("plain", layering.Path("./uses-vars"), layering.TargetNamespace("other"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			rule: lint.RuleNoPostBuild,
			want: lint.Finding{Layer: "plain", Object: "ConfigMap/other/gw", File: "uses-vars/gw.yaml", Line: 4, Message: "${domain} is a variable of the platform, but this layer has no spec.postBuild"},
		},
		{
			// A substituteFrom source nothing makes fails the layer.
			name: "substitute-from",
			bad:  stack().Layer("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			good: layering.New("platform", layering.FromOCI(registry, "v1"), layering.External(layering.ObjectRef{Kind: "ConfigMap", Name: "cluster-vars"})).
				Layer("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			rule: lint.RuleSubstituteFrom,
			want: lint.Finding{Layer: "sub", Message: "substituteFrom ConfigMap/flux-system/cluster-vars: no layer applied before this one creates it"},
		},
		{
			// Made by the layer itself: Flux loads variables before it
			// applies, so it never applies and never creates it.
			name: "substitute-from-same-layer",
			bad:  stack().Layer("vars", layering.Path("./vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			good: stack().Layer("vars", layering.Path("./vars")).Then("sub", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			rule: lint.RuleSubstituteFrom,
			want: lint.Finding{Layer: "vars", Message: "is created by this same layer"},
		},
		{
			// Made by the layer itself, and before Flux too (the bootstrap
			// step applies it, or it is declared): the first reconcile
			// reads it. Found on a public repository whose bootstrap
			// script applies cluster-settings before Flux.
			name: "substitute-from-same-layer-made-before",
			bad:  stack().Layer("vars", layering.Path("./vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			good: layering.New("platform", layering.FromOCI(registry, "v1"), layering.External(layering.ObjectRef{Kind: "ConfigMap", Name: "cluster-vars"})).
				Layer("vars", layering.Path("./vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})),
			rule: lint.RuleSubstituteFrom,
			want: lint.Finding{Layer: "vars", Message: "is created by this same layer"},
		},
		{
			// A health check on an object nothing creates waits until the
			// timeout; on one of a layer not depended on, it races it.
			name: "health-check",
			bad: stack().Layer("apps", layering.Path("./checked"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "wbe", Namespace: "apps"})),
			good: stack().Layer("apps", layering.Path("./checked"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "apps"})),
			rule: lint.RuleHealthCheck,
			want: lint.Finding{Layer: "apps", Message: "health check Deployment/apps/wbe: no layer creates this object"},
		},
		{
			name: "health-check-not-depended-on",
			bad: stack().Layer("apps", layering.Path("./checked")).Layer("gate", layering.Path("./vars"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "apps"})),
			good: stack().Layer("apps", layering.Path("./checked")).Then("gate", layering.Path("./vars"), layering.HealthChecks(
				meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "apps"})),
			rule: lint.RuleHealthCheck,
			want: lint.Finding{Layer: "gate", Message: `the object is created by layer "apps", which this layer does not depend on`},
		},
		{
			name: "path",
			bad:  stack().Layer("crds", layering.Path("./nope"), layering.KeepOnDelete()),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()),
			rule: lint.RulePath,
			want: lint.Finding{Layer: "crds", Message: `path "./nope": no such file or directory`},
		},
		{
			// Flux's build refuses two objects with one id; the fast path
			// of a directory without a kustomization must too.
			name: "path-duplicate-object",
			bad:  stack().Layer("namespaces", layering.Path("./namespaces")).Then("twice", layering.Path("./twice")),
			good: stack().Layer("namespaces", layering.Path("./namespaces")).Then("apps", layering.Path("./apps")),
			rule: lint.RulePath,
			want: lint.Finding{Layer: "twice", File: "twice/b.yaml", Line: 2, Message: "Deployment/apps/web is already at twice/a.yaml:1"},
		},
		{
			// Flux fails on a repeated key when it turns the built object
			// into JSON; lint reads kustomize's nodes, so it checks.
			name: "path-repeated-key",
			bad:  stack().Layer("namespaces", layering.Path("./namespaces")).Then("repeated", layering.Path("./repeated")),
			good: stack().Layer("namespaces", layering.Path("./namespaces")).Then("kustomized", layering.Path("./kustomized")),
			rule: lint.RulePath,
			want: lint.Finding{Layer: "repeated", Message: `Deployment/web: mapping key "replicas" already defined`},
		},
		{
			name: "crd-order",
			bad: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("crs", layering.Path("./crs")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("crs", layering.Path("./crs")),
			rule: lint.RuleCRDOrder,
			want: lint.Finding{Layer: "crs", Object: "ClusterSecretStore/vault", File: "crs/store.yaml", Line: 1, Message: `the CRD of ClusterSecretStore (external-secrets.io) is in layer "crds", which this layer does not depend on`},
		},
		{
			name: "crd-order-nowhere",
			bad:  stack().Layer("crs", layering.Path("./crs")),
			good: layering.New("platform", layering.FromOCI(registry, "v1"), layering.ExistingAPIGroups("external-secrets.io")).Layer("crs", layering.Path("./crs")),
			rule: lint.RuleCRDOrder,
			want: lint.Finding{Layer: "crs", Object: "ClusterSecretStore/vault", File: "crs/store.yaml", Line: 1, Message: "no layer defines the CRD of ClusterSecretStore"},
		},
		{
			name: "webhook-order",
			bad: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("operator", layering.Path("./operator"), layering.Wait()).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("operator", layering.Path("./operator"), layering.Wait()).
				Then("crs", layering.Path("./crs")),
			rule: lint.RuleWebhookOrder,
			want: lint.Finding{Layer: "crs", Object: "ClusterSecretStore/vault", File: "crs/store.yaml", Line: 1, Message: `operator layer "operator" serves the admission webhook of external-secrets.io clustersecretstores (assumed from fluxpack's table of known operators`},
		},
		{
			name: "webhook-order-from-webhook-configuration",
			bad: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("webhook", layering.Path("./webhook")).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("webhook", layering.Path("./webhook")).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds", "webhook")),
			rule: lint.RuleWebhookOrder,
			want: lint.Finding{Layer: "crs", Object: "ClusterSecretStore/vault", Message: `operator layer "webhook"`},
		},
		{
			name: "operator-wait",
			bad: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("operator", layering.Path("./operator"), layering.NoWait()).
				Then("crs", layering.Path("./crs")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("operator", layering.Path("./operator")).
				Then("crs", layering.Path("./crs")),
			rule: lint.RuleOperatorWait,
			want: lint.Finding{Layer: "operator", Message: "operator layer without wait or healthChecks"},
		},
		{
			name: "namespace-order",
			bad:  stack().Layer("namespaces", layering.Path("./namespaces")).Layer("apps", layering.Path("./apps")),
			good: stack().Layer("namespaces", layering.Path("./namespaces")).Then("apps", layering.Path("./apps")),
			rule: lint.RuleNamespaceOrder,
			want: lint.Finding{Layer: "apps", Object: "Deployment/apps/web", File: "apps/deploy.yaml", Line: 1, Message: `namespace "apps" is created by layer "namespaces", which this layer does not depend on`},
		},
		{
			name: "namespace-order-nobody",
			bad:  stack().Layer("apps", layering.Path("./apps")),
			good: layering.New("platform", layering.FromOCI(registry, "v1"), layering.ExistingNamespaces("apps")).Layer("apps", layering.Path("./apps")),
			rule: lint.RuleNamespaceOrder,
			want: lint.Finding{Layer: "apps", Object: "Deployment/apps/web", File: "apps/deploy.yaml", Line: 1, Message: `no layer creates namespace "apps"`},
		},
		{
			name: "namespace-order-through-kustomize",
			bad:  stack().Layer("namespaces", layering.Path("./namespaces")).Layer("kustomized", layering.Path("./kustomized")),
			good: stack().Layer("namespaces", layering.Path("./namespaces")).Then("kustomized", layering.Path("./kustomized")),
			rule: lint.RuleNamespaceOrder,
			want: lint.Finding{Layer: "kustomized", Object: "Deployment/apps/team-web", File: "kustomized/deploy.yaml", Line: 2, Message: `namespace "apps"`},
		},
		{
			// helm-controller installs into spec.targetNamespace and fails
			// the release until it exists, unless install.createNamespace.
			name: "namespace-order-helm-target",
			bad: stack().Layer("web", layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "web", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}),
				layering.ReleaseNamespace("apps"))),
			good: stack().Layer("web", layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "web", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}),
				layering.ReleaseNamespace("apps"), layering.CreateNamespace())),
			rule: lint.RuleNamespaceOrder,
			want: lint.Finding{Layer: "web", Object: "HelmRelease/flux-system/web", Message: `no layer creates namespace "apps"`},
		},
		{
			// helm-controller resolves valuesFrom before it installs: a
			// ConfigMap no layer applied before creates fails the release.
			name: "values-from",
			bad: stack().Layer("web", layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "web", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}),
				layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "web-values"}))),
			good: stack().Layer("values", layering.Path("./values")).
				Then("web", layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "web", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts"}}),
					layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "web-values"}))),
			rule: lint.RuleValuesFrom,
			want: lint.Finding{Layer: "web", Object: "HelmRelease/flux-system/web", Message: "valuesFrom ConfigMap/flux-system/web-values: no layer creates it"},
		},
		{
			name: "crd-prune",
			bad:  stack().Layer("crds", layering.Path("./crds")),
			good: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()),
			rule: lint.RuleCRDPrune,
			want: lint.Finding{Layer: "crds", Object: "CustomResourceDefinition/clustersecretstores.external-secrets.io", File: "crds/crd.yaml", Line: 1, Message: "prune: true on a layer holding CRDs"},
		},
		{
			name: "helm-crds",
			bad:  stack().Layer("helm-and-crs", layering.Path("./helm-and-crs")),
			good: stack().Layer("operator-crds", layering.Path("./operator-crds")).Then("crs", layering.Path("./crs")),
			rule: lint.RuleHelmCRDs,
			want: lint.Finding{Layer: "helm-and-crs", Object: "ClusterSecretStore/vault", File: "helm-and-crs/store.yaml", Line: 1, Message: "HelmRelease/flux-system/external-secrets installs the CRDs of external-secrets.io in this same layer (install.crds: Create; assumed from fluxpack's table of known operators"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := lintStack(t, tt.bad, lintTree)
			var got *lint.Finding
			for i := range bad {
				if bad[i].Rule == tt.rule {
					got = &bad[i]
					break
				}
			}
			require.NotNil(t, got, "lint of the bad stack: want a %s finding, got %v", tt.rule, bad)
			assert.Equal(t, tt.want.Layer, got.Layer, "layer")
			assert.Equal(t, tt.want.Object, got.Object, "object")
			if tt.want.File != "" {
				assert.Equal(t, tt.want.File, got.File, "file")
				assert.Equal(t, tt.want.Line, got.Line, "line")
			}
			assert.Contains(t, got.Message, tt.want.Message)

			good := lintStack(t, tt.good, lintTree)
			assert.NotContains(t, rules(good), tt.rule, "lint of the fixed stack: %v", good)
		})
	}
}

// Traps: layouts that look like races but that real Flux applies first
// time. Lint must stay silent on each.
func TestLintTraps(t *testing.T) {
	ignored := strings.Replace(webhookYAML, "    rules:", "    failurePolicy: Ignore\n    rules:", 1)
	otherResource := strings.Replace(webhookYAML, "resources: [clustersecretstores]", "resources: [pushsecrets]", 1)
	tests := []struct {
		name  string
		stack *layering.Builder
		files map[string]string
	}{
		{
			// kustomize-controller applies a Kustomization's CRDs first
			// and waits until they are established (its staged apply).
			name:  "a CRD and its custom resources in one Kustomization",
			stack: stack().Layer("mixed", layering.Path("./mixed"), layering.KeepOnDelete()),
			files: lintTree,
		},
		{
			// A HelmRelease layer after the CRDs is no webhook server by
			// that alone: nothing says its chart serves this group.
			name: "a release of an unknown chart between the CRDs and the custom resources",
			stack: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("app-release", layering.Path("./app-release")).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds")),
			files: lintTree,
		},
		{
			// A release that installs CRDs of unknown groups, before the
			// custom resources: it is no CRD source of this layer's group.
			name: "a release of an unknown chart in the layer of custom resources whose CRD comes first",
			stack: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Then("crs", layering.Path("./crs-and-app")),
			files: map[string]string{"crds/crd.yaml": crdYAML, "crs-and-app/store.yaml": crYAML, "crs-and-app/release.yaml": unknownReleaseYAML},
		},
		{
			// The API server admits the object when a webhook with
			// failurePolicy Ignore cannot be called.
			name: "a webhook with failurePolicy Ignore",
			stack: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("webhook", layering.Path("./webhook")).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds")),
			files: map[string]string{"crds/crd.yaml": crdYAML, "webhook/webhook.yaml": ignored, "crs/store.yaml": crYAML},
		},
		{
			// A webhook intercepts the resources its rules name, not the
			// whole group.
			name: "a webhook of another resource of the group",
			stack: stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
				Layer("webhook", layering.Path("./webhook")).
				Layer("crs", layering.Path("./crs"), layering.DependsOn("crds")),
			files: map[string]string{"crds/crd.yaml": crdYAML, "webhook/webhook.yaml": otherResource, "crs/store.yaml": crYAML},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Empty(t, lintStack(t, tt.stack, tt.files))
		})
	}
}

// Lint never fetches: a kustomization pointing at a URL or a Git
// repository leaves its layer unchecked (kustomize-controller fetches it),
// or, for a controller run with --no-remote-bases, is a finding; the
// server is never called.
func TestLintNeverTouchesTheNetwork(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		_, _ = w.Write([]byte(nsYAML))
	}))
	t.Cleanup(srv.Close)
	for _, remote := range []string{srv.URL + "/ns.yaml", "github.com/acme/platform//base?ref=v1", "git@github.com:acme/platform.git", "https://example.com/x.yaml"} {
		files := map[string]string{
			"remote/kustomization.yaml": "resources: [\"" + remote + "\"]\n",
			"apps/deploy.yaml":          deployYAML,
		}
		b := stack().Layer("remote", layering.Path("./remote")).Then("apps", layering.Path("./apps"))
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, files)
		rep, err := lint.Stack(t.Context(), b, dir)
		require.NoError(t, err)
		assert.Empty(t, failing(rep), "%s: kustomize-controller fetches it", remote)
		require.Len(t, rep.Coverage, 1, "%s: %+v", remote, rep.Coverage)
		assert.Equal(t, lint.CoverageRemote, rep.Coverage[0].Cause)
		assert.Equal(t, []string{"remote", "apps"}, rep.Coverage[0].Layers, "the layer and the one applied after it")
		assert.Contains(t, rep.Coverage[0].Missing[0], "remote resources are not read")
		assert.Contains(t, rep.Summary(), "2 behind a remote resource lint does not fetch")

		fs := lintStack(t, b, files, lint.WithNoRemoteBases())
		require.Len(t, fs, 1, "%s: %v", remote, fs)
		assert.Equal(t, lint.RulePath, fs[0].Rule)
		assert.Contains(t, fs[0].Message, "remote resources are not read", remote)
	}
	assert.Zero(t, calls.Load(), "lint made a request")
}

// A file a kustomization names by a URL (a generator's source, here) is
// downloaded by kustomize in kustomize-controller, with --no-remote-bases
// too: the layer is a gap either way, never a finding, and the server is
// never called.
func TestLintRemoteFileIsAGap(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	files := map[string]string{
		"monitoring/kustomization.yaml": "configMapGenerator:\n- name: dashboards\n  files: [cluster.json=" + srv.URL + "/cluster.json]\n",
		"apps/deploy.yaml":              deployYAML,
	}
	b := stack().Layer("monitoring", layering.Path("./monitoring")).Then("apps", layering.Path("./apps"))
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, files)
	for _, opts := range [][]lint.Option{nil, {lint.WithNoRemoteBases()}} {
		rep, err := lint.Stack(t.Context(), b, dir, opts...)
		require.NoError(t, err)
		assert.Empty(t, failing(rep))
		require.Len(t, rep.Coverage, 1, "%+v", rep.Coverage)
		assert.Equal(t, lint.CoverageRemote, rep.Coverage[0].Cause)
		assert.Contains(t, rep.Coverage[0].Missing[0], "monitoring/kustomization.yaml: configMapGenerator file")
	}
	assert.Zero(t, calls.Load(), "lint made a request")
}

func TestLintClean(t *testing.T) {
	b := stack().
		Layer("namespaces", layering.Path("./namespaces")).
		Add(layering.Operator("es", layering.CRDsLayer(layering.Path("./crds")),
			layering.OperatorLayer(layering.Path("./operator")),
			layering.CRsLayer(layering.Path("./crs")))).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("namespaces"))
	fs := lintStack(t, b, lintTree)
	assert.Empty(t, fs)
}

// A parent with wait: true is Ready only when the Kustomizations it
// applies are (kustomize-controller assesses them by their Ready
// condition), so what depends on the parent comes after its children: the
// CRD a child applies is there for it. Without wait it is not.
func TestLintWaitParentReadiesItsChildren(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"crds/crd.yaml": crdYAML, "apps/store.yaml": crYAML, "infrastructure/ns.yaml": nsYAML})
	plan := func(wait bool) *layering.Plan {
		ks := func(name, path string, wait bool) *kustomizev1.Kustomization {
			return &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
				Spec:       kustomizev1.KustomizationSpec{Path: path, Wait: wait, Prune: false},
			}
		}
		return &layering.Plan{Name: "tenants", Namespace: "flux-system", Layers: []layering.Layer{
			{Name: "infrastructure", Kustomization: ks("infrastructure", "./infrastructure", wait)},
			{Name: "crds", Parent: "infrastructure", Kustomization: ks("crds", "./crds", true)},
			{Name: "apps", DependsOn: []string{"infrastructure"}, Kustomization: ks("apps", "./apps", true)},
		}}
	}
	inputs := func() []fluxbuild.Input {
		src := &fluxbuild.Source{Dir: dir}
		return []fluxbuild.Input{{Source: src}, {Source: src}, {Source: src}}
	}
	rep, err := lint.Plan(t.Context(), plan(true), inputs(), dir)
	require.NoError(t, err)
	assert.Empty(t, failing(rep), "wait: true on the parent")

	rep, err = lint.Plan(t.Context(), plan(false), inputs(), dir)
	require.NoError(t, err)
	fs := failing(rep)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, lint.RuleCRDOrder, fs[0].Rule)
	assert.Contains(t, fs[0].Message, `is in layer "crds", which this layer does not depend on`)
}

// A layer lint cannot read keeps quiet only the rules of the layers
// applied after it: a substituteFrom typo or a health check on an object
// nobody makes elsewhere is still found, and Coverage says what was not
// checked.
func TestLintUnreadableLayerSilencesOnlyWhatFollowsIt(t *testing.T) {
	files := map[string]string{
		"broken/kustomization.yaml": "resources: [missing.yaml]\n",
		"apps/deploy.yaml":          deployYAML,
		"namespaces/ns.yaml":        nsYAML,
	}
	b := stack().Layer("broken", layering.Path("./broken")).
		Layer("namespaces", layering.Path("./namespaces")).
		Then("apps", layering.Path("./apps"),
			layering.SubstituteFrom(kustomizeRef("ConfigMap", "cluster-varz")),
			layering.HealthChecks(meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "webb"}))
	fs := lintStack(t, b, files)
	assert.ElementsMatch(t, []lint.Rule{lint.RulePath, lint.RuleSubstituteFrom, lint.RuleHealthCheck}, rules(fs), "%v", fs)
}

// A bootstrap helmfile that installs an operator before Flux makes its
// CRDs and webhook exist first: no race is left to report. One that only
// renders CRDs (--include-crds) leaves the webhook to the layer.
func TestLintHelmfileBootstrap(t *testing.T) {
	naive := stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("operator", layering.Path("./operator"), layering.Wait()).
		Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	dir := t.TempDir()
	apps := filepath.Join(dir, "apps.yaml")
	crdsOnly := filepath.Join(dir, "crds.yaml")
	require.NoError(t, os.WriteFile(apps, []byte("releases:\n  - name: eso\n    namespace: external-secrets\n    chart: oci://ghcr.io/external-secrets/charts/external-secrets\n"), 0o600))
	require.NoError(t, os.WriteFile(crdsOnly, []byte("helmDefaults:\n  args: [--include-crds, --no-hooks]\n---\nreleases:\n  - name: external-secrets\n    namespace: external-secrets\n"), 0o600))

	assert.Contains(t, rules(lintStack(t, naive, lintTree)), lint.RuleWebhookOrder, "without the helmfile")
	assert.Empty(t, lintStack(t, naive, lintTree, lint.WithHelmfile(apps)), "the helmfile installs the operator before Flux")
	assert.Contains(t, rules(lintStack(t, naive, lintTree, lint.WithHelmfile(crdsOnly))), lint.RuleWebhookOrder, "a CRDs-only helmfile")
	assert.Empty(t, lintStack(t, naive, lintTree, lint.WithExistingWebhooks("external-secrets.io/clustersecretstores")))

	_, err := lint.Stack(t.Context(), naive, dir, lint.WithHelmfile(filepath.Join(dir, "none.yaml")))
	require.ErrorIs(t, err, lint.ErrInvalidOption)
	assert.ErrorContains(t, err, "none.yaml")
	_, err = lint.Stack(t.Context(), naive, dir, lint.WithExistingWebhooks("a/b/c"))
	require.ErrorIs(t, err, lint.ErrInvalidOption)
}

// Flux applies nothing under a suspended Kustomization until it is
// resumed, by which time the rest of the platform is there: the layers
// under it race only each other.
func TestLintSuspendedSubtree(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"crds/crd.yaml": crdYAML, "optin/ns.yaml": nsYAML, "crs/store.yaml": crYAML})
	plan := func(suspend bool) *layering.Plan {
		ks := func(name, path string, suspend bool) *kustomizev1.Kustomization {
			return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
				Spec: kustomizev1.KustomizationSpec{Path: path, Wait: true, Suspend: suspend}}
		}
		return &layering.Plan{Name: "optin", Namespace: "flux-system", Layers: []layering.Layer{
			{Name: "crds", Kustomization: ks("crds", "./crds", false)},
			{Name: "optin", Kustomization: ks("optin", "./optin", suspend)},
			{Name: "crs", Parent: "optin", Kustomization: ks("crs", "./crs", false)},
		}}
	}
	src := &fluxbuild.Source{Dir: dir}
	inputs := []fluxbuild.Input{{Source: src}, {Source: src}, {Source: src}}
	rep, err := lint.Plan(t.Context(), plan(true), inputs, dir)
	require.NoError(t, err)
	assert.Empty(t, failing(rep), "under a suspended parent")
	rep, err = lint.Plan(t.Context(), plan(false), inputs, dir)
	require.NoError(t, err)
	assert.Equal(t, []lint.Rule{lint.RuleCRDOrder}, rules(failing(rep)), "%v", rep.Findings)
}

// A hub applies to spokes through spec.kubeConfig: a webhook served in one
// cluster does not intercept the custom resources of another, and rules
// relate only layers of one cluster.
func TestLintRelatesOnlyLayersOfOneCluster(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"crds/crd.yaml": crdYAML, "webhook/webhook.yaml": webhookYAML, "crs/store.yaml": crYAML})
	plan := func(webhookCluster string) *layering.Plan {
		ks := func(name, path, cluster string, deps ...string) layering.Layer {
			k := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
				Spec: kustomizev1.KustomizationSpec{Path: path, Wait: true}}
			if cluster != "" {
				k.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: cluster}}
			}
			return layering.Layer{Name: name, Kustomization: k, DependsOn: deps}
		}
		return &layering.Plan{Name: "hub", Namespace: "flux-system", Layers: []layering.Layer{
			ks("crds", "./crds", "spoke-a"),
			ks("webhook", "./webhook", webhookCluster),
			ks("crs", "./crs", "spoke-a", "crds"),
		}}
	}
	src := &fluxbuild.Source{Dir: dir}
	inputs := []fluxbuild.Input{{Source: src}, {Source: src}, {Source: src}}
	rep, err := lint.Plan(t.Context(), plan("spoke-b"), inputs, dir)
	require.NoError(t, err)
	assert.Empty(t, failing(rep), "the webhook serves spoke-b")
	rep, err = lint.Plan(t.Context(), plan("spoke-a"), inputs, dir)
	require.NoError(t, err)
	assert.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(failing(rep)), "the webhook serves spoke-a too: %v", rep.Findings)
}

// TestNoCrossNamespaceRefs: with the lockdown flag, a HelmRelease whose
// chart source is in another namespace is a finding; without it, or with
// the source in the release's namespace, none.
func TestNoCrossNamespaceRefs(t *testing.T) {
	release := func(sourceNS string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: team-a}
spec:
  interval: 10m
  chart:
    spec:
      chart: podinfo
      sourceRef: {kind: HelmRepository, name: podinfo, namespace: ` + sourceNS + `}
`
	}
	for _, tc := range []struct {
		name     string
		sourceNS string
		opts     []lint.Option
		want     int
	}{
		{"locked down, source elsewhere", "flux-system", []lint.Option{lint.WithNoCrossNamespaceRefs(), lint.WithExistingNamespaces("team-a")}, 1},
		{"locked down, source beside the release", "team-a", []lint.Option{lint.WithNoCrossNamespaceRefs(), lint.WithExistingNamespaces("team-a")}, 0},
		{"not locked down", "flux-system", []lint.Option{lint.WithExistingNamespaces("team-a")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"apps/release.yaml": release(tc.sourceNS)})
			rep, err := lint.Stack(t.Context(), stack().Layer("apps", layering.Path("./apps")), dir, tc.opts...)
			require.NoError(t, err)
			var got []lint.Finding
			for _, f := range rep.Findings {
				if f.Rule == lint.RuleCrossNamespace {
					got = append(got, f)
				}
			}
			require.Len(t, got, tc.want, "%v", rep.Findings)
			if tc.want > 0 {
				assert.Contains(t, got[0].Message, "spec.chart.spec.sourceRef HelmRepository/flux-system/podinfo is in another namespace than the HelmRelease (team-a)")
				assert.Equal(t, "HelmRelease/team-a/podinfo", got[0].Object)
			}
		})
	}
}

// TestDualOwner: an object two layers apply is a finding; one applied
// only when missing (ssa: IfNotPresent), one whose name is a ${var}, and
// one a chart also renders are not.
func TestDualOwner(t *testing.T) {
	cm := func(name, annotations string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: apps\n" + annotations + "data: {a: b}\n"
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a/shared.yaml": cm("shared", ""),
		"a/once.yaml":   cm("once", "  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}\n"),
		"a/var.yaml":    cm("${app}", ""),
		"b/shared.yaml": cm("shared", ""),
		"b/once.yaml":   cm("once", "  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}\n"),
		"b/var.yaml":    cm("${app}", ""),
		"b/own.yaml":    cm("own", ""),
	})
	p := stack().Layer("a", layering.Path("./a"), layering.Substitute(map[string]string{"app": "x"})).
		Then("b", layering.Path("./b"), layering.Substitute(map[string]string{"app": "y"}))
	rep, err := lint.Stack(t.Context(), p, dir, lint.WithExistingNamespaces("apps"))
	require.NoError(t, err)
	var got []string
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleDualOwner {
			got = append(got, f.Layer+" "+f.Object)
			assert.Contains(t, f.Message, `applied by layers "a", "b"`)
		}
	}
	assert.Equal(t, []string{"b ConfigMap/apps/shared"}, got, "%v", rep.Findings)
}

// A child's custom resource is behind an operator its parent's
// dependsOn waits for: the parent applies the child's Kustomization only
// once its own dependencies are Ready (wait: true on "platform" makes its
// child "operator" one of them), so the webhook serves before the child
// applies. Without the parent's dependsOn, it races.
func TestLintWebhookBehindTheParentsDependency(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"crds/crd.yaml": crdYAML, "operator/webhook.yaml": webhookYAML, "apps/store.yaml": crYAML, "platform/kustomization.yaml": "resources: []\n", "tenants/kustomization.yaml": "resources: []\n"})
	plan := func(dependsOn ...string) *layering.Plan {
		ks := func(name, path string) *kustomizev1.Kustomization {
			return &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
				Spec:       kustomizev1.KustomizationSpec{Path: path, Wait: true},
			}
		}
		return &layering.Plan{Name: "home", Namespace: "flux-system", Layers: []layering.Layer{
			{Name: "platform", Kustomization: ks("platform", "./platform")},
			{Name: "crds", Parent: "platform", Kustomization: ks("crds", "./crds")},
			{Name: "operator", Parent: "platform", DependsOn: []string{"crds"}, Kustomization: ks("operator", "./operator")},
			{Name: "apps", DependsOn: dependsOn, Kustomization: ks("apps", "./tenants")},
			{Name: "store", Parent: "apps", Kustomization: ks("store", "./apps")},
		}}
	}
	src := &fluxbuild.Source{Dir: dir}
	inputs := func() []fluxbuild.Input {
		return []fluxbuild.Input{{Source: src}, {Source: src}, {Source: src}, {Source: src}, {Source: src}}
	}
	rep, err := lint.Plan(t.Context(), plan("platform"), inputs(), dir)
	require.NoError(t, err)
	assert.Empty(t, rules(failing(rep)), "the parent of the custom resource depends on the operator's parent, which waits for it")

	rep, err = lint.Plan(t.Context(), plan(), inputs(), dir)
	require.NoError(t, err)
	assert.Contains(t, rules(failing(rep)), lint.RuleWebhookOrder)
}

// Helm installs a chart's namespaced objects that name no namespace in
// the release's (spec.targetNamespace): a health check on one finds it
// there.
func TestLintHealthCheckOnAChartObjectWithoutNamespace(t *testing.T) {
	files := map[string]string{
		"charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"charts/web/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: web:1}]}\n",
		"apps/ns.yaml":                     nsYAML,
		"apps/release.yaml":                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: flux-system}\nspec:\n  interval: 1h\n  targetNamespace: apps\n  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}\n",
	}
	check := func(ns string) *layering.Builder {
		return stack().Layer("apps", layering.Path("./apps"), layering.HealthChecks(meta.NamespacedObjectKindReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: ns}))
	}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, files)
	withCharts := lint.WithCharts(filepath.Join(dir, "charts"))
	assert.Empty(t, lintStack(t, check("apps"), files, withCharts))
	fs := lintStack(t, check("flux-system"), files, withCharts)
	assert.Equal(t, []lint.Rule{lint.RuleHealthCheck}, rules(fs), "%v", fs)
}

// A finding names the layer's file and line, or only the folder of an
// entry point that no Kustomization of the tree applies.
func TestFindingString(t *testing.T) {
	f := lint.Finding{Rule: lint.RuleCrossNamespace, File: "clusters/e2e/team-b.yaml", Line: 21, Layer: "flux-system", LayerFile: "clusters/e2e", Object: "HelmRelease/team-b/team-b", Message: "m"}
	assert.Equal(t, `clusters/e2e/team-b.yaml:21: layer "flux-system" (clusters/e2e): HelmRelease/team-b/team-b: m [cross-namespace-ref]`, f.String())
	f.LayerFile, f.LayerLine = "clusters/e2e/apps.yaml", 3
	assert.Equal(t, `clusters/e2e/team-b.yaml:21: layer "flux-system" (clusters/e2e/apps.yaml:3): HelmRelease/team-b/team-b: m [cross-namespace-ref]`, f.String())
	// A severity other than error is said before the message, whatever
	// the rule (a health-check hint, a rule set to hint in .fluxpack.yaml);
	// the message itself does not carry it.
	for sev, want := range map[lint.Severity]string{lint.SeverityError: "m", lint.SeverityWarning: "warning: m", lint.SeverityHint: "hint: m"} {
		f.Severity = sev
		assert.Equal(t, `clusters/e2e/team-b.yaml:21: layer "flux-system" (clusters/e2e/apps.yaml:3): HelmRelease/team-b/team-b: `+want+` [cross-namespace-ref]`, f.String())
	}
}

// helmfile creates each release's namespace (createNamespace is true by
// default), so a bootstrap helmfile's namespaces exist before Flux; not
// those of a helmfile that only renders CRDs, nor where createNamespace is
// false. FindHelmfiles finds helmfiles where repositories keep them.
func TestLintHelmfileNamespaces(t *testing.T) {
	b := stack().Layer("apps", layering.Path("./apps"))
	files := map[string]string{"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: tools}\ndata: {a: b}\n"}
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte(text), 0o600))
		return f
	}
	release := "releases:\n  - name: toolbox\n    namespace: tools\n    chart: oci://example.com/charts/toolbox\n"
	sync := write("setup/bootstrap/helmfile.d/01-apps.yaml", release)
	crds := write("kubernetes/bootstrap/helmfile/crds.yaml", "helmDefaults:\n  args: [--include-crds]\n"+release)
	noCreate := write("bootstrap/helmfile.yaml", "helmDefaults: {createNamespace: false}\n"+release)
	releaseNoCreate := write("helmfile.d/apps.yaml", strings.Replace(release, "    chart:", "    createNamespace: false\n    chart:", 1))
	write("bootstrap/helmfile/values.yaml", "replicas: 2\n") // no releases: not a helmfile
	assert.ElementsMatch(t, []string{sync, crds, noCreate, releaseNoCreate}, bootstrap.Helmfiles(dir, ""))
	// For an entry point, the bootstrap folders on its way up only: not
	// kubernetes/bootstrap/, another cluster's.
	assert.ElementsMatch(t, []string{sync, noCreate, releaseNoCreate}, bootstrap.Helmfiles(dir, filepath.Join(dir, "setup", "flux", "cluster")))

	assert.Equal(t, []lint.Rule{lint.RuleNamespaceOrder}, rules(lintStack(t, b, files)), "without a helmfile")
	assert.Empty(t, lintStack(t, b, files, lint.WithHelmfile(sync)), "helmfile sync creates the namespace")
	for _, f := range []string{crds, noCreate, releaseNoCreate} {
		assert.Equal(t, []lint.Rule{lint.RuleNamespaceOrder}, rules(lintStack(t, b, files, lint.WithHelmfile(f))), f)
	}
}

// An operator layer that is Ready before its webhook serves races only a
// layer that waits for it and applies what the webhook admits: nothing
// when no layer waits for it, or when the layers that do apply other
// kinds. Where the custom resources do not wait for it at all, the
// webhook-order finding says both fixes.
func TestLintOperatorWaitNeedsAWaiter(t *testing.T) {
	files := maps.Clone(lintTree)
	files["apps/deploy.yaml"] = deployYAML
	files["apps/ns.yaml"] = nsYAML
	alone := stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("webhook", layering.Path("./webhook"), layering.NoWait())
	assert.Empty(t, lintStack(t, alone, files), "no layer waits for the operator")

	others := stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("webhook", layering.Path("./webhook"), layering.NoWait()).
		Then("apps", layering.Path("./apps"))
	assert.Empty(t, lintStack(t, others, files), "the layer waiting for the operator applies no resource its webhook admits")

	waiter := stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("webhook", layering.Path("./webhook"), layering.NoWait()).
		Then("crs", layering.Path("./crs"))
	fs := lintStack(t, waiter, files)
	require.Equal(t, []lint.Rule{lint.RuleOperatorWait}, rules(fs), "%v", fs)
	assert.Contains(t, fs[0].Message, `layer "crs" waits for it and applies ClusterSecretStore/vault, which its webhook admits`)

	unordered := stack().Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("webhook", layering.Path("./webhook"), layering.NoWait()).
		Layer("crs", layering.Path("./crs"), layering.DependsOn("crds"))
	fs = lintStack(t, unordered, files)
	require.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, rules(fs), "%v", fs)
	assert.Contains(t, fs[0].Message, `depend on "webhook", not just on the CRDs, and give "webhook" wait: true or health checks on its workload`)
}

// operatorFiles is a platform whose operator layer ("ctrl") installs
// external-secrets and cert-manager from charts lint does not have (the
// table of known operators says what their webhooks admit), with
// ExternalSecrets and a Certificate for the layers after it.
func operatorFiles() map[string]string {
	release := func(name string) string {
		return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec:\n  interval: 30m\n  chart: {spec: {chart: " + name + ", sourceRef: {kind: HelmRepository, name: upstream}}}\n"
	}
	secret := func(ns, name string) string {
		return "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
			"spec: {secretStoreRef: {kind: ClusterSecretStore, name: store}, target: {name: " + name + "}}\n"
	}
	return map[string]string{
		"ctrl/repo.yaml":      "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: upstream, namespace: flux-system}\nspec: {interval: 1h, url: https://charts.example.org}\n",
		"ctrl/eso.yaml":       release("external-secrets"),
		"ctrl/certs.yaml":     release("cert-manager"),
		"cfg/secret.yaml":     secret("ns1", "a"),
		"cfg/settings.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n",
		"apps/secret.yaml":    secret("ns2", "b"),
		"apps-cert/cert.yaml": "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: web, namespace: ns2}\nspec: {secretName: web-tls, issuerRef: {name: ca}}\n",
	}
}

// An operator layer that is Ready before its webhook serves races the
// layer that waits for it and applies what the webhook admits first; a
// layer behind that one is not raced: the layer in between is Ready only
// once the API server admitted its custom resource, so the webhook
// served. The finding names the layer that races (F1 of issue 40: it
// named the one behind, whichever came first in the platform).
func TestLintOperatorWaitNamesTheLayerThatRaces(t *testing.T) {
	ctrl := func() *layering.Builder {
		return stack().Layer("ctrl", layering.Path("./ctrl"), layering.NoWait())
	}
	tests := []struct {
		name string
		b    *layering.Builder
		want string // the layer and object the finding names
	}{
		{
			name: "the dependent behind the first waits for it, listed before it",
			b: ctrl().Layer("apps", layering.Path("./apps"), layering.DependsOn("cfg")).
				Layer("cfg", layering.Path("./cfg"), layering.DependsOn("ctrl"), layering.Wait()),
			want: `layer "cfg" waits for it and applies ExternalSecret/ns1/a`,
		},
		{
			name: "the dependent behind the first waits for it, listed after it",
			b: ctrl().Layer("cfg", layering.Path("./cfg"), layering.DependsOn("ctrl"), layering.Wait()).
				Layer("apps", layering.Path("./apps"), layering.DependsOn("cfg")),
			want: `layer "cfg" waits for it and applies ExternalSecret/ns1/a`,
		},
		{
			// The first layer's Ready says nothing without wait either:
			// it is Ready once its apply, the custom resource's admission
			// included, succeeded.
			name: "the layer in between does not wait",
			b: ctrl().Layer("apps", layering.Path("./apps"), layering.DependsOn("cfg")).
				Layer("cfg", layering.Path("./cfg"), layering.DependsOn("ctrl"), layering.NoWait()),
			want: `layer "cfg" waits for it and applies ExternalSecret/ns1/a`,
		},
		{
			// An ExternalSecret admitted says nothing of cert-manager's
			// webhook, though one layer installs both.
			name: "the layer behind applies what another webhook admits",
			b: ctrl().Layer("apps-cert", layering.Path("./apps-cert"), layering.DependsOn("cfg")).
				Layer("cfg", layering.Path("./cfg"), layering.DependsOn("ctrl"), layering.Wait()),
			want: `layer "apps-cert" waits for it and applies Certificate/ns2/web`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := lintStack(t, tt.b, operatorFiles())
			require.Equal(t, []lint.Rule{lint.RuleOperatorWait}, rules(fs), "%v", fs)
			assert.Equal(t, "ctrl", fs[0].Layer)
			assert.Contains(t, fs[0].Message, tt.want)
		})
	}

	// With nothing of the operator's in the layer in between, the layer
	// behind it races by itself, and is named.
	files := operatorFiles()
	delete(files, "cfg/secret.yaml")
	b := ctrl().Layer("cfg", layering.Path("./cfg"), layering.DependsOn("ctrl"), layering.Wait()).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("cfg"))
	fs := lintStack(t, b, files)
	require.Equal(t, []lint.Rule{lint.RuleOperatorWait}, rules(fs), "%v", fs)
	assert.Contains(t, fs[0].Message, `layer "apps" waits for it and applies ExternalSecret/ns2/b`)
}

// A finding names an object as Flux applies it: a ${var} in its name or
// namespace that its layer's postBuild.substitute sets is substituted;
// one that only substituteFrom could set, or on an object that opts out
// of substitution, is left as written.
func TestLintNamesObjectsAsApplied(t *testing.T) {
	cr := func(name string, disabled bool) string {
		meta := "metadata:\n  name: " + name + "\n"
		if disabled {
			meta += "  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\n"
		}
		return "apiVersion: external-secrets.io/v1\nkind: ClusterSecretStore\n" + meta + "spec: {}\n"
	}
	files := map[string]string{
		"crds/crd.yaml":           crdYAML,
		"inline/store.yaml":       cr("${APP}-${ENV:=prod}", false),
		"from/store.yaml":         cr("${APP}-${REGION}", false),
		"disabled/store.yaml":     cr("${APP}", true),
		"vars/configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars, namespace: flux-system}\ndata: {REGION: eu}\n",
		"namespaces/ignored.yaml": nsYAML,
	}
	b := stack().Layer("crds", layering.Path("./crds")).
		Layer("vars", layering.Path("./vars")).
		Layer("inline", layering.Path("./inline"), layering.Substitute(map[string]string{"APP": "vault"})).
		Layer("from", layering.Path("./from"), layering.DependsOn("vars"), layering.Substitute(map[string]string{"APP": "vault"}),
			layering.SubstituteFrom(kustomizeRef("ConfigMap", "vars"))).
		Layer("disabled", layering.Path("./disabled"), layering.Substitute(map[string]string{"APP": "vault"}))
	objects := map[string]string{}
	for _, f := range lintStack(t, b, files) {
		if f.Rule == lint.RuleCRDOrder {
			objects[f.Layer] = f.Object
		}
	}
	assert.Equal(t, map[string]string{
		"inline":   "ClusterSecretStore/vault-prod",
		"from":     "ClusterSecretStore/${APP}-${REGION}",
		"disabled": "ClusterSecretStore/${APP}",
	}, objects)
}

// A Secret a bootstrap pipeline makes from a file through a filter lint
// does not run (`just template FILE | python3 -c '…' | kubectl apply -f -`)
// is taken to exist before Flux as the file has it, and the report says
// through what.
func TestLintFilteredBootstrapManifest(t *testing.T) {
	b := stack().Layer("tunnel", layering.Path("./uses-vars"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "tunnel-id"}))
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, lintTree)
	file := filepath.Join(dir, "bootstrap", "resources.yaml.j2")
	testutil.WriteFiles(t, dir, map[string]string{"bootstrap/resources.yaml.j2": "apiVersion: v1\nkind: Secret\nmetadata: {name: tunnel-id, namespace: flux-system}\nstringData: {id: op://vault/tunnel/id}\n"})

	rep, err := lint.Stack(t.Context(), b, dir)
	require.NoError(t, err)
	assert.Equal(t, []lint.Rule{lint.RuleSubstituteFrom}, rules(failing(rep)), "without the bootstrap file")

	rep, err = lint.Stack(t.Context(), b, dir, lint.WithFilteredBootstrapManifest(file, "python3", "yq"))
	require.NoError(t, err)
	assert.Empty(t, failing(rep))
	assert.Equal(t, []string{"python3", "yq"}, rep.Unrun)
	require.Len(t, rep.Bootstrap, 1)
	assert.Contains(t, rep.Bootstrap[0], "bootstrap/resources.yaml.j2: a file a bootstrap script applies with kubectl through python3 and yq, which lint does not run")
	assert.Contains(t, rep.Bootstrap[0], "Secret/flux-system/tunnel-id")
	assert.Contains(t, rep.Summary(), "read 1 entry of the bootstrap step as there before Flux (Bootstrap), some through python3 and yq, which lint does not run")

	rep, err = lint.Stack(t.Context(), b, dir, lint.WithBootstrapManifests(file))
	require.NoError(t, err)
	assert.Empty(t, rep.Unrun, "applied as it is")
	assert.NotContains(t, rep.Summary(), "which lint does not run")

	for _, opt := range []lint.Option{lint.WithFilteredBootstrapManifest("", "python3"), lint.WithFilteredBootstrapManifest(file), lint.WithFilteredBootstrapManifest(file, "")} {
		_, err = lint.Stack(t.Context(), b, dir, opt)
		require.ErrorIs(t, err, lint.ErrInvalidOption)
	}
}

// A gate: a layer with nothing to apply whose health checks name a CRD an
// operator's chart installs. A layer that depends on it is held until the
// CRD is established, so its custom resources do not race the CRD, though
// they may still race the operator's webhook. Found on a public repository
// (cnpg-crds, a false crd-order finding).
func TestLintCRDGate(t *testing.T) {
	files := maps.Clone(lintTree)
	files["gate/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
	gate := func(checks ...meta.NamespacedObjectKindReference) *layering.Builder {
		return stack().Layer("operator", layering.Path("./operator"), layering.Wait()).
			Layer("gate", layering.Path("./gate"), layering.HealthChecks(checks...)).
			Layer("crs", layering.Path("./crs"), layering.DependsOn("gate"))
	}
	crd := meta.NamespacedObjectKindReference{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "clustersecretstores.external-secrets.io"}
	other := meta.NamespacedObjectKindReference{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "clusters.postgresql.cnpg.io"}
	assert.Contains(t, rules(lintStack(t, gate(other), files)), lint.RuleCRDOrder, "a gate on another group's CRD")
	got := rules(lintStack(t, gate(crd), files))
	assert.NotContains(t, got, lint.RuleCRDOrder, "the gate holds crs until the CRD is established")
	assert.Contains(t, got, lint.RuleWebhookOrder, "the webhook may not serve yet")

	// A parent that health-checks the CRD is no gate for the layers it
	// applies: their Kustomizations reconcile as soon as it applies them,
	// before its health checks pass.
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, files)
	ks := func(name, path string, wait bool, checks ...meta.NamespacedObjectKindReference) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{Path: path, Wait: wait, HealthChecks: checks}}
	}
	plan := &layering.Plan{Name: "gated", Namespace: "flux-system", Layers: []layering.Layer{
		{Name: "operator", Kustomization: ks("operator", "./operator", true)},
		{Name: "gate", Kustomization: ks("gate", "./gate", false, crd)},
		{Name: "crs", Parent: "gate", Kustomization: ks("crs", "./crs", false)},
	}}
	src := &fluxbuild.Source{Dir: dir}
	rep, err := lint.Plan(t.Context(), plan, []fluxbuild.Input{{Source: src}, {Source: src}, {Source: src}}, dir)
	require.NoError(t, err)
	assert.Contains(t, rules(failing(rep)), lint.RuleCRDOrder, "applied by the gate, not gated by it: %v", rep.Findings)
}

// A layer that depends on one applying a custom resource of a group (the
// ClusterSecretStore its ExternalSecrets read) is held until that layer is
// Ready, which it is only once its custom resource was applied: the CRD
// was there, and, when the operator brings the CRDs with its webhook
// configuration, the webhook admitted it. So the layer behind does not
// race the CRD nor the webhook; the layer in between does, and is the one
// named. Found on a public home-ops repository, where every app depends on
// the store's layer and none on the operator: 33 findings for one race.
func TestLintRaceNamedOnceBehindAUser(t *testing.T) {
	files := operatorFiles()
	files["store/store.yaml"] = crYAML
	b := stack().Layer("ctrl", layering.Path("./ctrl"), layering.Wait()).
		Layer("store", layering.Path("./store")).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("store")).
		Layer("apps-cert", layering.Path("./apps-cert"), layering.DependsOn("store"))
	byLayer := map[string][]lint.Rule{}
	for _, f := range lintStack(t, b, files) {
		byLayer[f.Layer] = append(byLayer[f.Layer], f.Rule)
	}
	assert.ElementsMatch(t, []lint.Rule{lint.RuleCRDOrder, lint.RuleWebhookOrder}, byLayer["store"], "the layer that races")
	assert.Empty(t, byLayer["apps"], "behind the store's layer: its ExternalSecret finds the CRD and the webhook")
	assert.ElementsMatch(t, []lint.Rule{lint.RuleCRDOrder, lint.RuleWebhookOrder}, byLayer["apps-cert"], "a ClusterSecretStore says nothing of cert-manager's CRDs")

	// When the CRDs come from a layer of their own, the webhook's
	// configuration does not come with them: a custom resource admitted
	// before it existed says nothing of the webhook, only of the CRD.
	files = map[string]string{"crds/crd.yaml": crdYAML, "operator/webhook.yaml": webhookYAML, "store/store.yaml": crYAML, "apps/store.yaml": strings.Replace(crYAML, "name: vault", "name: other", 1)}
	b = stack().Layer("crds", layering.Path("./crds")).
		Layer("operator", layering.Path("./operator"), layering.Wait()).
		Layer("store", layering.Path("./store"), layering.DependsOn("crds")).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("store"))
	byLayer = map[string][]lint.Rule{}
	for _, f := range lintStack(t, b, files) {
		byLayer[f.Layer] = append(byLayer[f.Layer], f.Rule)
	}
	assert.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, byLayer["store"])
	assert.Equal(t, []lint.Rule{lint.RuleWebhookOrder}, byLayer["apps"], "the CRD is there; the webhook may not serve")
}
