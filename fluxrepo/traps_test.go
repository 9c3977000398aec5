package fluxrepo_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// A trap is a near miss of a rule in a repository of the corpus: what the
// rule must stay silent on, and the one edit that makes it a real failure
// of Flux, on which the rule must fire.
type trap struct {
	rule    lint.Rule
	fixture string // a fixture of read_test.go
	// What the rule must stay silent on: a finding of rule on layer (any
	// layer when ""), about object (any when ""), whose message holds
	// about (any when "").
	layer, object, about string
	why                  string // why Flux does not fail there
	edit                 edit   // the one edit after which Flux fails there
	// setup, when set, is made to the fixture first: the near miss is in
	// the fixture so edited.
	setup *edit
	// Where the rule fires after the edit, when not on layer and object.
	firesLayer, firesObject string
}

// edit replaces old by new in file, once (old must be there once), or
// creates file with new when old is "".
type edit struct{ file, old, new string }

// traps: at least one per rule lint reports (the merge hint aside).
var traps = []trap{
	{
		rule: lint.RuleCRDOrder, fixture: "wait-parents", layer: "wiki", object: "Database/wiki/wiki",
		why:  "wiki's parent, apps, depends on platform, which waits (wait: true) for its child database-crds",
		edit: edit{"clusters/home/platform.yaml", "  wait: true\n", "  wait: false\n"},
	},
	{
		rule: lint.RuleWebhookOrder, fixture: "wait-parents", layer: "wiki", object: "Database/wiki/wiki",
		why:  "apps applies wiki only once platform is Ready, and platform waits for its child database-operator, which serves the webhook",
		edit: edit{"clusters/home/apps.yaml", "  dependsOn:\n    - name: platform\n", ""},
	},
	{
		rule: lint.RuleWebhookOrder, fixture: "monorepo-helm", layer: "policies", object: "ClusterPolicy/require-requests",
		why:  "the policy agent's webhook has failurePolicy: Ignore, so the API server admits policies while it is down",
		edit: edit{"infrastructure/controllers/policy-agent.yaml", "failurePolicy: Ignore", "failurePolicy: Fail"},
	},
	{
		rule: lint.RuleNamespaceOrder, fixture: "monorepo-helm", layer: "infra-controllers", object: "HelmRelease/flux-system/cert-manager",
		why:  "helm-controller creates the release's namespace (install.createNamespace)",
		edit: edit{"infrastructure/controllers/cert-manager.yaml", "    createNamespace: true\n", ""},
	},
	{
		rule: lint.RuleNamespaceOrder, fixture: "tenant-fleet-production", layer: "team-b", object: "ConfigMap/ingress/team-b-routes",
		why:  "in production, team-b's onboarding depends on infra-configs, which depends on the layer creating the ingress namespace (staging's does not: its golden has the finding)",
		edit: edit{"clusters/production/team-b.yaml", "  dependsOn:\n    - name: infra-configs\n", ""},
	},
	{
		rule: lint.RuleHelmCRDs, fixture: "monorepo-helm", layer: "observability-rules", object: "PrometheusRule/monitoring/node-alerts",
		why:        "the rules are in a layer of their own, which depends on the layer whose chart installs their CRD",
		edit:       edit{"observability/stack/kustomization.yaml", "  - release.yaml\n", "  - release.yaml\n  - ../rules\n"},
		firesLayer: "observability",
	},
	{
		// With observability's chart not installing its CRDs (the setup),
		// no layer brings the ServiceMonitor CRD; the dozen releases of
		// apps install none either. (In the corpus as it is, observability
		// brings the CRD, apps does not depend on it: crd-order, and with
		// the edit still a race, not a deadlock. Adding the CRD to
		// app-template's crds/ would be no near miss: infra-controllers,
		// an ancestor of apps, installs app-template too, and would bring
		// the CRD first.)
		rule: lint.RuleHelmCRDs, fixture: "monorepo-helm", layer: "apps", object: "ServiceMonitor/home/home-assistant",
		why:   "app-template, the chart of every release in apps, ships no CRDs; the edit gives home-assistant a chart that does",
		setup: &edit{"observability/stack/release.yaml", "    createNamespace: true\n    crds: CreateReplace\n", "    createNamespace: true\n    crds: Skip\n"},
		edit:  edit{"apps/base/home-assistant/helmrelease.yaml", "chart: ./charts/app-template", "chart: ./charts/monitoring-stack"},
	},
	{
		rule: lint.RuleHealthCheck, fixture: "monorepo-helm", layer: "infra-controllers",
		why:  "the checked Deployment is in cert-manager's chart, which names no namespace: Helm installs it in the release's targetNamespace",
		edit: edit{"infrastructure/controllers/cert-manager.yaml", "  targetNamespace: cert-manager\n", "  targetNamespace: certificates\n"},
	},
	{
		// A health check on a Flux object names it exactly: a close name
		// is a typo, said with what the layers apply.
		rule: lint.RuleHealthCheck, fixture: "monorepo-helm", layer: "infra-controllers", about: `did you mean "HelmRelease/flux-system/cert-manager"`,
		why:   "the layer applies HelmRelease/flux-system/cert-manager, the release its health check names",
		setup: &edit{"clusters/prod/infrastructure.yaml", "      name: cert-manager-webhook\n      namespace: cert-manager\n", "      name: cert-manager-webhook\n      namespace: cert-manager\n    - apiVersion: helm.toolkit.fluxcd.io/v2\n      kind: HelmRelease\n      name: cert-manager\n      namespace: flux-system\n"},
		edit:  edit{"clusters/prod/infrastructure.yaml", "      name: cert-manager\n", "      name: certmanager\n"},
	},
	{
		rule: lint.RuleSubstituteFrom, fixture: "external-sources", layer: "apps", about: "ConfigMap/flux-system/cluster-vars",
		why:  "Terraform writes the ConfigMap before Flux: .fluxpack.yaml declares it external (the Secret beside it is not: its golden has the finding)",
		edit: edit{".fluxpack.yaml", "external: [ConfigMap/flux-system/cluster-vars]", "external: []"},
	},
	{
		rule: lint.RuleNoPostBuild, fixture: "external-sources", layer: "infra", object: "ConfigMap/kube-system/node-report",
		why:  "${HOSTNAME} is the shell's, no variable of the platform: left as written, it is what the script means",
		edit: edit{"infrastructure/node-report.yaml", "${HOSTNAME}", "${cluster_name}"},
	},
	{
		rule: lint.RuleValuesFrom, fixture: "monorepo-helm", layer: "apps", object: "HelmRelease/tools/paperless",
		why:  "its ConfigMap is generated in its own layer, and the Secret nobody makes is optional",
		edit: edit{"apps/base/paperless/helmrelease.yaml", "      optional: true\n", ""},
	},
	{
		rule: lint.RuleDualOwner, fixture: "tenant-fleet-production", layer: "team-b", object: "ClusterRole/tenant-view",
		why:  "both onboardings apply it with ssa: IfNotPresent: the first creates it, neither takes it over",
		edit: edit{"tenants/base/common/tenant-view.yaml", "  annotations:\n    kustomize.toolkit.fluxcd.io/ssa: IfNotPresent\n", ""},
	},
	{
		rule: lint.RuleCrossNamespace, fixture: "tenant-fleet-production", layer: "team-a/apps",
		why:  "the tenant's Kustomization and its GitRepository are both in team-a, as --no-cross-namespace-refs requires",
		edit: edit{"tenants/base/team-a/sync.yaml", "    name: team-a\n  path:", "    name: team-a\n    namespace: flux-system\n  path:"},
	},
	{
		rule: lint.RuleOperatorWait, fixture: "monorepo-helm", layer: "infra-controllers",
		why:  "the operator layer has no wait, but a health check on the webhook's Deployment",
		edit: edit{"clusters/prod/infrastructure.yaml", "  healthChecks:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: cert-manager-webhook\n      namespace: cert-manager\n", ""},
	},
	{
		rule: lint.RuleCRDPrune, fixture: "monorepo-helm", layer: "crds",
		why:  "the CRDs' layer does not prune",
		edit: edit{"clusters/prod/crds.yaml", "  prune: false\n", "  prune: true\n"},
	},
	{
		rule: lint.RuleGraph, fixture: "tenant-fleet-production",
		why:  "both teams' Kustomizations are named apps, each in its own namespace: two layers, team-a/apps and team-b/apps",
		edit: edit{"tenants/base/team-b/sync.yaml", "  name: apps\n  namespace: team-b\n", "  name: apps\n  namespace: team-a\n"},
	},
	{
		rule: lint.RulePath, fixture: "artifact-generator", layer: "infra",
		why:  "the path is the artifact's (./controllers), which the ArtifactGenerator copies from platform/infra/, not the repository's",
		edit: edit{"clusters/prod/layers.yaml", "  path: ./controllers\n", "  path: ./platform/infra/controllers\n"},
	},
	{
		rule: lint.RuleChart, fixture: "monorepo-helm", layer: "apps", object: "HelmRelease/media/jellyfin",
		why:  "app-template requires image.repository, which the release's values give",
		edit: edit{"apps/base/jellyfin/helmrelease.yaml", "repository: registry.example.com/jellyfin, ", ""},
	},
	{
		rule: lint.RuleVariables, fixture: "external-sources", layer: "monitoring", object: "ConfigMap/monitoring/shop-dashboard",
		why:  "Grafana's ${DS_PROMETHEUS} is escaped ($${DS_PROMETHEUS}): postBuild, whose variables are all known here, leaves it to Grafana",
		edit: edit{"monitoring/dashboard.yaml", "$${DS_PROMETHEUS}", "${DS_PROMETHEUS}"},
	},
	{
		rule: lint.RuleSource, fixture: "artifact-generator",
		why:  "every copy of the ArtifactGenerator names the alias of its source",
		edit: edit{"clusters/prod/artifacts.yaml", `"@repo/teams/web/**"`, `"@web/teams/web/**"`},
	},
	{
		rule: lint.RuleSource, fixture: "artifact-generator", about: "copy to",
		why:  "every copy of the ArtifactGenerator lands in the artifact (@artifact/…)",
		edit: edit{"clusters/prod/artifacts.yaml", `to: "@artifact/web/"`, `to: "web/"`},
	},
}

// Every rule but the merge hint has a trap in the corpus: silent on the
// near miss, firing once the trap's one edit makes Flux fail.
func TestTraps(t *testing.T) {
	covered := map[lint.Rule]bool{}
	for _, tr := range traps {
		covered[tr.rule] = true
	}
	for _, r := range lint.Rules() {
		assert.True(t, r == lint.RuleMerge || covered[r], "rule %s has no trap", r)
	}
	for _, tr := range traps {
		t.Run(string(tr.rule)+"/"+tr.fixture+"/"+tr.layer, func(t *testing.T) {
			t.Parallel()
			f := fixtureNamed(t, tr.fixture)
			root := t.TempDir()
			require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join("testdata", "repos", f.repo))))
			if tr.setup != nil {
				tr.setup.apply(t, root)
			}

			fs := lintCopy(t, f, root)
			for _, fd := range fs {
				assert.False(t, tr.matches(fd, tr.layer, tr.object), "%s must stay silent (%s), but: %s", tr.rule, tr.why, fd)
			}

			tr.edit.apply(t, root)
			fs = lintCopy(t, f, root)
			layer, object := tr.layer, tr.object
			if tr.firesLayer != "" {
				layer = tr.firesLayer
			}
			if tr.firesObject != "" {
				object = tr.firesObject
			}
			assert.True(t, slices.ContainsFunc(fs, func(fd lint.Finding) bool { return tr.matches(fd, layer, object) }),
				"after editing %s, want %s on layer %q object %q; got:\n%s", tr.edit.file, tr.rule, layer, object, findingLines(fs))
		})
	}
}

func (tr trap) matches(f lint.Finding, layer, object string) bool {
	return f.Rule == tr.rule && (layer == "" || f.Layer == layer) && (object == "" || f.Object == object) && strings.Contains(f.Message, tr.about)
}

func (e edit) apply(t *testing.T, root string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(e.file))
	if e.old == "" {
		require.NoFileExists(t, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(e.new), 0o644))
		return
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), e.old), "the edit's text is in %s once", e.file)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644))
}

func fixtureNamed(t *testing.T, name string) fixture {
	t.Helper()
	i := slices.IndexFunc(fixtures, func(f fixture) bool { return f.name == name })
	require.GreaterOrEqual(t, i, 0, "no fixture %q", name)
	return fixtures[i]
}

// lintCopy lints the fixture's entry in a copy of its repository at root,
// with the copy's lint configuration (lint.Tree finds it), as fluxpack
// lint would: the findings, and the repository's notes.
func lintCopy(t *testing.T, f fixture, root string) []lint.Finding {
	t.Helper()
	opts := append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)
	rep, err := lint.Tree(t.Context(), filepath.Join(root, f.entry), opts)
	require.NoError(t, err)
	return rep.Findings
}

func findingLines(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// A layer whose kustomization.yaml lists a missing file is a path finding
// that names the file relative to the repository, as every finding does,
// not by the absolute folder it was read from (a temporary one in a diff).
func TestPathMessageIsRelative(t *testing.T) {
	root := write(t, map[string]string{
		".git/HEAD":               "ref: refs/heads/main\n",
		"clusters/c/apps.yaml":    ks("apps", "./apps", ""),
		"apps/kustomization.yaml": "resources: [release.yaml]\n",
	})
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), nil)
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1, "%v", rep.Findings)
	f := rep.Findings[0]
	assert.Equal(t, lint.RulePath, f.Rule)
	assert.Contains(t, f.Message, "apps/release.yaml")
	assert.NotContains(t, f.Message, root, "the message names the file by its path in the repository")
}

// A Kustomization the root applies (a folder without kustomization.yaml,
// read recursively) and a child Kustomization applies again is one
// dual-owner finding listing every place, not a graph line per object
// besides it.
func TestTwoParentsSaidOnce(t *testing.T) {
	root := write(t, map[string]string{
		".git/HEAD":                 "ref: refs/heads/main\n",
		"clusters/c/apps.yaml":      ks("apps", "./clusters/c/apps", ""),
		"clusters/c/apps/shop.yaml": ks("shop", "./shop", ""),
		"clusters/c/apps/blog.yaml": ks("blog", "./blog", ""),
		"shop/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shop, namespace: default}\n",
		"blog/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: blog, namespace: default}\n",
	})
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), nil)
	require.NoError(t, err)
	var rules []lint.Rule
	for _, f := range rep.Findings {
		rules = append(rules, f.Rule)
	}
	require.Equal(t, []lint.Rule{lint.RuleDualOwner}, rules, "%s", findingLines(rep.Findings))
	assert.Len(t, rep.Findings[0].Places, 2)
}

// cert-manager's chart installs its CRDs as templates when its values say
// crds.enabled: true, not from its crds/ folder: the helm-crds finding
// says so, not "install.crds: Create" (rathix/fleet-infra's shape).
func TestHelmCRDsFromValues(t *testing.T) {
	release := func(values string) string {
		return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: cert-manager, namespace: flux-system}\n" +
			"spec:\n  interval: 1h\n  targetNamespace: cert-manager\n  chart:\n    spec:\n      chart: cert-manager\n      sourceRef: {kind: HelmRepository, name: jetstack}\n" + values
	}
	for name, tt := range map[string]struct{ values, want string }{
		"crds.enabled":     {"  values:\n    crds:\n      enabled: true\n", "(values crds.enabled: true; assumed"},
		"installCRDs":      {"  values:\n    installCRDs: true\n", "(values installCRDs: true; assumed"},
		"install.crds set": {"  install: {crds: CreateReplace}\n", "(install.crds: CreateReplace; assumed"},
	} {
		t.Run(name, func(t *testing.T) {
			root := write(t, map[string]string{
				".git/HEAD":             "ref: refs/heads/main\n",
				"clusters/c/infra.yaml": ks("infra", "./infra", ""),
				"infra/release.yaml":    release(tt.values),
				"infra/issuer.yaml":     "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: letsencrypt}\nspec: {selfSigned: {}}\n",
			})
			rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), nil)
			require.NoError(t, err)
			var msgs []string
			for _, f := range rep.Findings {
				if f.Rule == lint.RuleHelmCRDs {
					msgs = append(msgs, f.Message)
				}
			}
			require.Len(t, msgs, 1, "%s", findingLines(rep.Findings))
			assert.Contains(t, msgs[0], tt.want)
		})
	}
}

// A dependency on a Kustomization that a layer lint could not build would
// make is said with that layer: the dependency is missing because the
// layer does not build (piontec/free-oci-kubernetes's shape).
func TestUnknownDependencyBehindABrokenLayer(t *testing.T) {
	root := write(t, map[string]string{
		".git/HEAD":                 "ref: refs/heads/main\n",
		"clusters/c/system.yaml":    ks("system", "./system", ""),
		"clusters/c/vpn.yaml":       ks("vpn", "./vpn", "  dependsOn: [{name: system-extra}]\n"),
		"system/kustomization.yaml": "resources: [extra.yaml, secret.yaml]\n",
		"system/extra.yaml":         ks("system-extra", "./extra", ""),
		"vpn/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vpn, namespace: default}\n",
		"extra/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\n",
	})
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), nil)
	require.NoError(t, err)
	var graph []string
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleGraph {
			graph = append(graph, f.Message)
		}
	}
	require.Len(t, graph, 1, "%s", findingLines(rep.Findings))
	assert.Contains(t, graph[0], `depends on Kustomization/flux-system/system-extra, which the platform does not have`)
	assert.Contains(t, graph[0], `unless a layer lint could not read makes it: "system" (does not build, in Flux either)`)
}

// A layer that applies a custom resource and, beside it, the Kustomization
// of the operator layer that brings its CRD deadlocks on a new cluster: the
// finding says so, and that a dependsOn cannot help (the shape of
// tyriis/home-ops' and gavinmcfall/home-ops' flux-apps).
func TestCRDFromOwnChildIsADeadlock(t *testing.T) {
	release := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: external-secrets, namespace: flux-system}\n" +
		"spec:\n  interval: 1h\n  chart:\n    spec:\n      chart: external-secrets\n      sourceRef: {kind: HelmRepository, name: eso}\n"
	root := write(t, map[string]string{
		".git/HEAD":                     "ref: refs/heads/main\n",
		"clusters/c/apps.yaml":          ks("apps", "./apps", ""),
		"apps/eso/ks.yaml":              ks("eso", "./eso", "  wait: true\n"),
		"apps/shop/externalsecret.yaml": "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata: {name: db, namespace: default}\nspec: {secretStoreRef: {kind: ClusterSecretStore, name: vault}}\n",
		"eso/release.yaml":              release,
	})
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), nil)
	require.NoError(t, err)
	var crd []lint.Finding
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleCRDOrder {
			crd = append(crd, f)
		}
	}
	require.Len(t, crd, 1, "%s", findingLines(rep.Findings))
	assert.Equal(t, "apps", crd[0].Layer)
	assert.Contains(t, crd[0].Message, `in layer "eso" (assumed from fluxpack's table of known operators`)
	assert.Contains(t, crd[0].Message, `which this layer applies itself`)
	assert.Contains(t, crd[0].Message, `a dependsOn cannot help`)
}
