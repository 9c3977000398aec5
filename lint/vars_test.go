package lint_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// Variables are checked per layer against the sources of that layer's own
// postBuild: its inline substitute, and the substituteFrom sources its
// ancestors create.
func TestLintVariables(t *testing.T) {
	files := map[string]string{
		"vars/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  namespace: flux-system\ndata:\n  domain: example.com\n",
		"apps/gw.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw\n  namespace: default\ndata:\n  host: \"*.${domain}\"\n  name: ${cluster_name}\n",
		"kapps/kustomization.yaml": "resources: [gw.yaml]\n",
		"kapps/gw.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw\n  namespace: default\ndata:\n  host: \"*.${domain}\"\n",
	}
	inline := layering.Substitute(map[string]string{"cluster_name": "c1"})
	from := layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})
	tests := []struct {
		name string
		b    *layering.Builder
		want []string // findings, as file:line: message prefix
	}{
		{"inline-only", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), inline),
			[]string{`apps/gw.yaml:7: variable "domain" is not set`}},
		{"from-only", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), from),
			[]string{`apps/gw.yaml:8: variable "cluster_name" is not set`}},
		{"both", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), inline, from), nil},
		{"kustomized", stack().Layer("vars", layering.Path("./vars")).Then("kapps", layering.Path("./kapps"), inline),
			[]string{`kapps/gw.yaml:7: variable "domain" is not set`}},
		// A vars entry declared in Go has no outputs file, and an optional
		// Secret may be missing: their keys are unknown, so a variable
		// nothing is known to provide is no finding.
		{"unknown-sources", layering.New("platform", layering.FromOCI(registry, "v1"), layering.Vars("tf-vars")).
			Layer("vars", layering.Path("./vars")).
			Then("apps", layering.Path("./apps"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "maybe", Optional: true})), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, files)
			rep, err := lint.Stack(t.Context(), tt.b, dir)
			require.NoError(t, err)
			var got []string
			for _, f := range failing(rep) {
				require.Equal(t, lint.RuleVariables, f.Rule, "%s", f)
				got = append(got, fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message))
			}
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], w), "finding %d:\n got %s\nwant %s…", i, got[i], w)
			}
		})
	}
}

// The default checker is package substitute's: what it reports per layer,
// against that layer's own sources.
func TestLintVariablesSubstitute(t *testing.T) {
	const outputs = `{
  "domain": {"sensitive": false, "type": "string", "value": "example.com"},
  "zone": {"sensitive": false, "type": "string", "value": "0123"},
  "db_password": {"sensitive": true, "type": "string", "value": "s3cr3t: yes"}
}`
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\ndata:\n" + data
	}
	tests := []struct {
		name   string
		vars   string // spec.vars
		layers string // spec.layers, after the "vars" layer
		files  map[string]string
		want   []string // findings, as file:line: layer: message
	}{
		{
			name: "provided", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps, postBuild: {substitute: {app: shop}}}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  host: \"${app}.${domain}\"\n  pw: \"${db_password}\"\n")},
		},
		{
			name: "not-set", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  host: \"${domain}\"\n  region: \"${region}\"\n")},
			want:   []string{`apps/a.yaml:8: apps: variable "region" is not set and has no default: Flux (strict mode) fails the Kustomization`},
		},
		{
			name: "retyped", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  zone: ${zone}\n")},
			want:   []string{`apps/a.yaml:7: apps: warning: YAML 1.1 reads the substituted value "0123" as`},
		},
		{
			name: "kustomized", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files: map[string]string{
				"apps/kustomization.yaml": "resources: [a.yaml]\n",
				"apps/a.yaml":             "# a comment\n" + cm("a", "  region: \"${region}\"\n"),
			},
			want: []string{`apps/a.yaml:8: apps: variable "region" is not set`},
		},
		{
			// Built objects are checked in kustomize's own nodes: the
			// retyping check, objects with substitution disabled and a
			// value repeated in two files all hold there too.
			name: "kustomized-retyped", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files: map[string]string{
				"apps/kustomization.yaml": "resources: [a.yaml, b.yaml, off.yaml]\n",
				"apps/a.yaml":             "# a comment\n" + cm("a", "  zone: ${zone}\n"),
				"apps/b.yaml":             cm("b", "  zone: ${zone}\n"),
				"apps/off.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: off\n  namespace: default\n" +
					"  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  zone: ${zone}\n  x: ${nope}\n",
			},
			want: []string{
				`apps/a.yaml:8: apps: warning: YAML 1.1 reads the substituted value "0123" as`,
				`apps/b.yaml:7: apps: warning: YAML 1.1 reads the substituted value "0123" as`,
			},
		},
		{
			// kustomize leaves local configuration out; Flux never
			// substitutes it.
			name: "local-config", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files: map[string]string{
				"apps/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n" +
					"  annotations: {config.kubernetes.io/local-config: 'true'}\ndata:\n  x: ${nope}\n---\n" + cm("b", "  y: ${nope}\n"),
			},
			want: []string{`apps/a.yaml:16: apps: variable "nope" is not set`},
		},
		{
			name: "per-layer", vars: "[]",
			layers: "- {name: one, path: ./one, postBuild: {substitute: {app: shop}}}\n    - {name: two, path: ./two, postBuild: {substitute: {region: eu}}}",
			files: map[string]string{
				"one/a.yaml": cm("a", "  x: \"${app}\"\n"),
				"two/b.yaml": cm("b", "  x: \"${app}\"\n"),
			},
			want: []string{`two/b.yaml:7: two: variable "app" is not set`},
		},
		{
			name: "unknown-source", vars: "[{name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  region: \"${region}\"\n  bad: \"${my-var}\"\n")},
			want:   []string{`apps/a.yaml:8: apps: Flux cannot parse "${my-var}"`},
		},
		{
			name: "source-not-an-ancestor", vars: "[]",
			layers: "- {name: settings, path: ./settings}\n    - {name: apps, path: ./apps, postBuild: {substituteFrom: [{kind: ConfigMap, name: settings}]}}",
			files: map[string]string{
				"settings/s.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: flux-system}\ndata: {region: eu}\n",
				"apps/a.yaml":     cm("a", "  region: \"${region}\"\n"),
			},
			want: []string{`stack.yaml:10: apps: substituteFrom ConfigMap/flux-system/settings is created by layer "settings", which this layer does not depend on`},
		},
		{
			name: "missing-outputs", vars: "[{outputs: nope.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  region: \"${region}\"\n")},
			want:   []string{`stack.yaml:6: : vars "cluster-vars": reading outputs: open `},
		},
		{
			name: "secret-values-stay-secret", vars: "[{outputs: tf.json, name: cluster-vars}]",
			layers: "- {name: apps, path: ./apps}",
			files:  map[string]string{"apps/a.yaml": cm("a", "  pw: ${db_password}\n")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"tf.json":      outputs,
				"vars/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n",
				"stack.yaml": "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: s, namespace: flux-system}\n" +
					"spec:\n  source: {url: " + registry + ", tag: v1}\n  vars: " + tt.vars + "\n  layers:\n" +
					"    - {name: vars, path: ./vars}\n    " + tt.layers + "\n",
			}
			maps.Copy(files, tt.files)
			writeTree(t, dir, files)
			rep, err := lint.File(t.Context(), filepath.Join(dir, "stack.yaml"))
			require.NoError(t, err)
			var got []string
			for _, f := range splitAll(failing(rep)) {
				if f.Rule == lint.RuleNamespaceOrder {
					continue
				}
				require.Contains(t, []lint.Rule{lint.RuleVariables, lint.RuleSubstituteFrom}, f.Rule, "%s", f)
				assert.NotContains(t, f.String(), "s3cr3t", "a sensitive value reached a finding")
				rel, err := filepath.Rel(dir, filepath.FromSlash(f.File))
				require.NoError(t, err)
				got = append(got, fmt.Sprintf("%s:%d: %s: %s", filepath.ToSlash(rel), f.Line, f.Layer, f.Marked()))
			}
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], w), "finding %d:\n got %s\nwant %s…", i, got[i], w)
			}
		})
	}
}

// WithOutputsFile reads a vars entry's outputs from another file than the
// one the stack names; a vars entry the stack lacks, or an empty name, is
// an invalid option.
func TestWithOutputsFile(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "elsewhere.json")
	writeTree(t, dir, map[string]string{
		"apps/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: flux-system}\ndata: {region: \"${region}\"}\n",
		"stack.yaml": "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: s, namespace: flux-system}\n" +
			"spec:\n  source: {url: " + registry + ", tag: v1}\n  vars: [{outputs: nope.json, name: cluster-vars}]\n  layers:\n" +
			"    - {name: apps, path: ./apps}\n",
	})
	require.NoError(t, os.WriteFile(other, []byte(`{"region": {"sensitive": false, "type": "string", "value": "eu"}}`), 0o644))
	messages := func(rep *lint.Report) []string {
		var out []string
		for _, f := range failing(rep) {
			out = append(out, f.Message)
		}
		return out
	}
	rep, err := lint.File(t.Context(), filepath.Join(dir, "stack.yaml"))
	require.NoError(t, err)
	require.Len(t, messages(rep), 1, "without the option, the stack's file is read: %q", messages(rep))
	assert.Contains(t, messages(rep)[0], "nope.json")

	rep, err = lint.File(t.Context(), filepath.Join(dir, "stack.yaml"), lint.WithOutputsFile("cluster-vars", other))
	require.NoError(t, err)
	assert.Empty(t, messages(rep), "the outputs are read from %s", other)

	for _, opt := range []lint.Option{lint.WithOutputsFile("other-vars", other), lint.WithOutputsFile("", other), lint.WithOutputsFile("cluster-vars", "")} {
		_, err := lint.File(t.Context(), filepath.Join(dir, "stack.yaml"), opt)
		assert.ErrorIs(t, err, lint.ErrInvalidOption)
	}
}

// splitAll is every place of the findings, one finding a place.
func splitAll(findings []lint.Finding) []lint.Finding {
	var out []lint.Finding
	for _, f := range findings {
		out = append(out, f.Split()...)
	}
	return out
}

// TestNoPostBuildByUse: a variable the platform substitutes in other
// layers (from a ConfigMap made outside, whose keys lint cannot read) used
// in a layer without postBuild is applied as the text ${cluster_name}:
// one finding for the layer and the variable, every use listed. A
// variable no layer substitutes (meant for another tool) is none.
func TestNoPostBuildByUse(t *testing.T) {
	from := layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})
	files := map[string]string{
		"infra/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: default\ndata:\n  cluster: ${cluster_name}\n",
		"apps/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apps\n  namespace: default\ndata:\n  cluster: ${cluster_name}\n  region: ${region:=eu}\n",
		"monitoring/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mon\n  namespace: default\ndata:\n  cluster: ${cluster_name}\n  dashboard: ${DS_PROMETHEUS}\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mon-2\n  namespace: default\ndata:\n  title: \"Cluster ${cluster_name}\"\n",
	}
	b := stack().
		Layer("infra", layering.Path("./infra"), from).
		Then("apps", layering.Path("./apps"), from).
		Then("monitoring", layering.Path("./monitoring"))
	got := lintStack(t, b, files, lint.WithExternal(layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "cluster-vars"}))
	require.Len(t, got, 1, "lint: one finding, got %v", got)
	f := got[0]
	assert.Equal(t, lint.RuleNoPostBuild, f.Rule)
	assert.Equal(t, "monitoring", f.Layer)
	assert.Equal(t, `${cluster_name} is substituted by the postBuild of layers "infra", "apps", but this layer has no spec.postBuild: Flux applies the text ${cluster_name} as written; add postBuild (substituteFrom ConfigMap/cluster-vars, as layer "infra" does), or, if the text is meant as written, suppress this finding in .fluxpack.yaml`, f.Message)
	assert.Equal(t, []lint.Place{
		{Object: "ConfigMap/default/mon", File: "monitoring/cm.yaml", Line: 7},
		{Object: "ConfigMap/default/mon-2", File: "monitoring/cm.yaml", Line: 16},
	}, f.Places, "every use of ${cluster_name} in the layer")
}

// TestNoPostBuildNotFromFailingUses: a layer whose postBuild does not
// provide ${DS_PROMETHEUS} (a Grafana dashboard's variable) and has no
// default for it fails in Flux, and that is its finding; it is no sign
// that the platform substitutes DS_PROMETHEUS, so the layers without
// postBuild, which apply the dashboard's text as written, have none.
// Found on a public home-ops repository (5 false no-postbuild lines).
func TestNoPostBuildNotFromFailingUses(t *testing.T) {
	dashboard := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\ndata:\n  dashboard.json: '{\"uid\": \"${DS_PROMETHEUS}\"}'\n"
	}
	files := map[string]string{
		"litellm/cm.yaml":  dashboard("litellm-dashboard"),
		"exporter/cm.yaml": dashboard("exporter-dashboard"),
	}
	b := stack().
		Layer("litellm", layering.Path("./litellm"), layering.Substitute(map[string]string{"APP": "litellm"})).
		Then("exporter", layering.Path("./exporter"))
	got := lintStack(t, b, files)
	require.Len(t, got, 1, "lint: one finding, got %v", got)
	assert.Equal(t, lint.RuleVariables, got[0].Rule)
	assert.Equal(t, "litellm", got[0].Layer)
	assert.Contains(t, got[0].Message, `variable "DS_PROMETHEUS" is not set and has no default`)

	// Where the use does not fail (a default), the layer substitutes it,
	// and the layer without postBuild is told.
	files["litellm/cm.yaml"] = strings.Replace(files["litellm/cm.yaml"], "${DS_PROMETHEUS}", "${DS_PROMETHEUS:=prometheus}", 1)
	got = lintStack(t, b, files)
	require.Len(t, got, 1, "lint: one finding, got %v", got)
	assert.Equal(t, lint.RuleNoPostBuild, got[0].Rule)
	assert.Equal(t, "exporter", got[0].Layer)
}

// A mutating webhook on Kustomizations in the tree (xunholy's
// kustomize-mutating-webhook, which gives every Kustomization the cluster's
// variables; or any MutatingWebhookConfiguration taking kustomizations) may
// give a layer the postBuild it lacks, or add to the one it has: its uses
// of variables nothing lint reads provides are not findings but one hint,
// at the webhook, naming the layers. Found on two public home-ops
// repositories (83 and 104 false no-postbuild lines), and on a third for
// layers with a postBuild of their own (29 false variables findings).
func TestNoPostBuildWithAKustomizationMutator(t *testing.T) {
	from := layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})
	files := map[string]string{
		"infra/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: default\ndata:\n  cluster: ${cluster_name}\n",
		"apps/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: apps\n  namespace: default\ndata:\n  cluster: ${cluster_name}\n",
		// A layer with a postBuild of its own that does not set what it
		// uses: the webhook adds its keys to that postBuild too.
		"web/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}\n  namespace: default\ndata:\n  host: ${APP}.${SECRET_DOMAIN}\n",
	}
	release := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: webhook\n  namespace: flux-system\nspec:\n  chartRef:\n    kind: OCIRepository\n    name: webhook\n" +
		"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: webhook\n  namespace: flux-system\nspec:\n  url: oci://ghcr.io/example/charts/kustomize-mutating-webhook\n  ref: {tag: 1.0.0}\n"
	mutating := "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: ks-defaults\nwebhooks:\n  - name: ks.example.com\n    admissionReviewVersions: [v1]\n    sideEffects: None\n" +
		"    clientConfig: {service: {name: ks, namespace: flux-system}}\n    rules:\n      - apiGroups: [kustomize.toolkit.fluxcd.io]\n        apiVersions: [v1]\n        operations: [CREATE, UPDATE]\n        resources: [kustomizations]\n"
	b := stack().
		Layer("webhook", layering.Path("./webhook")).
		Then("infra", layering.Path("./infra"), from).
		Then("apps", layering.Path("./apps")).
		Then("web", layering.Path("./web"), layering.Substitute(map[string]string{"APP": "web"}))
	ext := lint.WithExternal(layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "cluster-vars"})
	for name, webhook := range map[string]string{"none": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: default\n", "chart": release, "configuration": mutating} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, files)
			testutil.WriteFiles(t, dir, map[string]string{"webhook/webhook.yaml": webhook})
			rep, err := lint.Stack(t.Context(), b, dir, ext)
			require.NoError(t, err)
			var got []string
			for _, f := range rep.Findings {
				if f.Rule == lint.RuleNoPostBuild || f.Rule == lint.RuleVariables {
					got = append(got, string(f.Rule)+" "+string(f.Severity)+" "+f.Layer)
				}
			}
			if name == "none" {
				assert.ElementsMatch(t, []string{"no-postbuild error apps", "variables error web"}, got)
				return
			}
			assert.Equal(t, []string{"no-postbuild hint webhook"}, got)
			assert.Zero(t, rep.Failing(), "%v", rep.Findings)
			for _, f := range rep.Findings {
				if f.Severity == lint.SeverityHint {
					assert.Contains(t, f.Message, `layers "apps", "web"`, "the hint names both layers")
				}
			}
		})
	}
}

// A substituteFrom source made by a layer that cannot exist first is a
// deadlock, not a missing dependsOn: made by a layer this one applies (its
// child never applies, as the parent fails before applying anything), or by
// a layer that waits for this one (depending on it would make a cycle).
// Found on a public home-ops repository, where lint advised the cycle.
func TestSubstituteFromDeadlocks(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"parent/kustomization.yaml": "resources: []\n",
		"secrets/secret.yaml":       "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nstringData:\n  domain: example.com\n",
		"apps/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  host: app.${domain}\n",
	})
	from := &kustomizev1.PostBuild{SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "Secret", Name: "cluster-secrets"}}}
	ks := func(name, path string, pb *kustomizev1.PostBuild) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{Path: path, PostBuild: pb}}
	}
	src := &fluxbuild.Source{Dir: dir}
	for _, c := range []struct {
		name   string
		layers []layering.Layer
		want   string
	}{
		{"child", []layering.Layer{
			{Name: "parent", Kustomization: ks("parent", "./apps", from)},
			{Name: "secrets", Parent: "parent", Kustomization: ks("secrets", "./secrets", nil)},
		}, `which this layer applies: Flux reads the variables before it applies anything of this layer, so "secrets" is never applied`},
		{"waiting", []layering.Layer{
			{Name: "apps", Kustomization: ks("apps", "./apps", from)},
			{Name: "secrets", DependsOn: []string{"apps"}, Kustomization: ks("secrets", "./secrets", nil)},
		}, `which waits for this layer: this layer fails until it exists and "secrets" waits for this one to be Ready, so neither ever is`},
		{"not depended on", []layering.Layer{
			{Name: "apps", Kustomization: ks("apps", "./apps", from)},
			{Name: "secrets", Kustomization: ks("secrets", "./secrets", nil)},
		}, `which this layer does not depend on: Flux fails the layer until it exists; depend on "secrets"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			inputs := make([]fluxbuild.Input, len(c.layers))
			for i := range inputs {
				inputs[i] = fluxbuild.Input{Source: src}
			}
			rep, err := lint.Plan(t.Context(), &layering.Plan{Name: "home", Namespace: "flux-system", Layers: c.layers}, inputs, dir)
			require.NoError(t, err)
			var got []lint.Finding
			for _, f := range rep.Findings {
				if f.Rule == lint.RuleSubstituteFrom {
					got = append(got, f)
				}
			}
			require.Len(t, got, 1, "%v", rep.Findings)
			assert.Contains(t, got[0].Message, c.want)
			assert.Equal(t, c.name == "not depended on", len(got[0].DependOn) > 0, "a dependsOn is advised only where it helps: %v", got[0].DependOn)
		})
	}
}
