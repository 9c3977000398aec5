package fluxrepo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
)

// A cluster bootstrapped by flux-operator: the FluxInstance's spec.sync is
// the root (an OCIRepository here, read from the repository without
// --source), and a multitenant instance locks the controllers down, so a
// tenant's source in flux-system is a finding.
func TestReadFluxInstance(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	instance := func(multitenant string) string {
		return `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: flux-system}
spec:
  distribution: {version: 2.7.x, registry: ghcr.io/fluxcd}
  cluster: {multitenant: ` + multitenant + `}
  sync:
    kind: OCIRepository
    url: oci://registry.example.com/fleet
    ref: latest
    path: clusters/prod
`
	}
	files := map[string]string{
		"clusters/prod/flux-system/flux-instance.yaml": instance("false"),
		"clusters/prod/infra.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec: {interval: 1h, path: ./infra, prune: true, sourceRef: {kind: OCIRepository, name: flux-system}}
`,
		"clusters/prod/tenant.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: team-a}
spec: {interval: 1h, path: ./tenants/team-a, prune: true, sourceRef: {kind: OCIRepository, name: flux-system, namespace: flux-system}}
`,
		"infra/config.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: infra, namespace: flux-system}\n",
		"tenants/team-a/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: team-a}\n",
	}
	testutil.WriteFiles(t, dir, files)
	entry := filepath.Join(dir, "clusters", "prod")

	repo, err := fluxrepo.Read(t.Context(), entry)
	require.NoError(t, err)
	defer repo.Close()
	require.Len(t, repo.Plan.Layers, 3)
	root := repo.Plan.Layers[0]
	assert.Equal(t, "flux-system", root.Name)
	assert.Equal(t, "OCIRepository", root.Kustomization.Spec.SourceRef.Kind)
	assert.Equal(t, "clusters/prod/flux-system/flux-instance.yaml", root.File)
	for i, in := range repo.Inputs {
		assert.NotNil(t, in.Source, "layer %s: %s", repo.Plan.Layers[i].Name, in.Unavailable)
	}
	rep, err := lint.Tree(t.Context(), entry, nil)
	require.NoError(t, err)
	assert.Equal(t, rep.Layers, rep.Checked, "every layer checked: %v", rep.Coverage)
	assert.Zero(t, rep.Failing(), "%v", rep.Findings)

	testutil.WriteFiles(t, dir, map[string]string{"clusters/prod/flux-system/flux-instance.yaml": instance("true")})
	rep, err = lint.Tree(t.Context(), entry, nil)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Failing(), "%v", rep.Findings)
	assert.Equal(t, lint.RuleCrossNamespace, rep.Findings[0].Rule)
	assert.Equal(t, "team-a/apps", rep.Findings[0].Layer)
}

// A ResourceSet's generated Kustomizations are layers like any other, one
// per input, and lint sees the objects they apply.
func TestReadResourceSet(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	testutil.WriteFiles(t, dir, map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: https://example.com/fleet.git, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 10m, path: ./clusters/prod, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		"clusters/prod/tenants.yaml": `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: tenants, namespace: flux-system}
spec:
  inputs: [{tenant: team-a}, {tenant: team-b}]
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata: {name: << inputs.tenant >>}
      spec:
        interval: 10m
        prune: true
        path: ./tenants/<< inputs.tenant >>
        sourceRef: {kind: GitRepository, name: flux-system}
`,
		"tenants/team-a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team-a}\n",
		"tenants/team-b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: team-b}\n",
	})
	rep, err := lint.Tree(t.Context(), filepath.Join(dir, "clusters", "prod"), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Layers)
	var layers []string
	for _, f := range rep.Findings {
		if f.Rule == lint.RuleNamespaceOrder {
			layers = append(layers, f.Layer)
		}
	}
	// Nothing creates the tenants' namespaces: each generated layer says so.
	assert.ElementsMatch(t, []string{"team-a", "team-b"}, layers, "%v", rep.Findings)
}

// Linting a FluxInstance's own folder (the bootstrap applies it; its
// spec.sync.path is elsewhere) follows the sync to the tree it applies
// when the repository holds it, and names what it syncs when it does not:
// never "no findings in 1 layer" for a tree lint did not read.
func TestReadFluxInstanceFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	instance := func(path string) string {
		return `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: flux-system}
spec:
  distribution: {version: 2.7.x, registry: ghcr.io/fluxcd}
  sync:
    kind: GitRepository
    url: https://github.com/example/fleet.git
    ref: refs/heads/main
    path: ` + path + `
`
	}
	testutil.WriteFiles(t, dir, map[string]string{
		"flux-operator/instance.yaml": instance("clusters/prod"),
		"clusters/prod/infra.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec: {interval: 1h, path: ./infra, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		// A race in the synced tree: a namespace nothing creates.
		"infra/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: infra, namespace: monitoring}\n",
	})
	entry := filepath.Join(dir, "flux-operator")

	repo, err := fluxrepo.Read(t.Context(), entry)
	require.NoError(t, err)
	defer repo.Close()
	var names []string
	for _, l := range repo.Plan.Layers {
		names = append(names, l.Name)
	}
	assert.Equal(t, []string{"flux-system", "infra"}, names, "the layers of the synced tree")
	root := repo.Plan.Layers[0]
	assert.Equal(t, "./clusters/prod", root.Kustomization.Spec.Path, "the root is the instance's sync")
	assert.Equal(t, "flux-operator/instance.yaml", root.File, "declared by the instance")

	rep, err := lint.Tree(t.Context(), entry, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Layers)
	require.Equal(t, 1, rep.Failing(), "%v", rep.Findings)
	assert.Equal(t, lint.RuleNamespaceOrder, rep.Findings[0].Rule, "the synced tree is linted")

	// A sync path the repository does not hold: named, not read.
	testutil.WriteFiles(t, dir, map[string]string{"flux-operator/instance.yaml": instance("clusters/staging")})
	rep, err = lint.Tree(t.Context(), entry, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Layers)
	assert.Zero(t, rep.Checked, "nothing checked fully")
	require.Len(t, rep.Coverage, 1, "%v", rep.Coverage)
	assert.Equal(t, []string{`layer "flux-system": FluxInstance/flux-system/flux syncs ./clusters/staging from GitRepository/flux-system/flux-system (https://github.com/example/fleet.git), which this repository does not hold: lint the repository that does, or map the source to its directory with --source GitRepository/flux-system/flux-system=DIR`},
		rep.Coverage[0].Missing, "the coverage names what the instance syncs")
}

// A home-ops cluster whose FluxInstance is installed by the flux-instance
// chart, its sync named home-kubernetes (spec.sync.name): the entry
// point's Kustomizations read GitRepository/flux-system/home-kubernetes,
// which nothing in the tree defines. The instance syncs the entry point
// from it, so it is the repository, and the root is the Kustomization the
// instance makes, whether the sync is in a values file of the chart, in a
// HelmRelease's values or in a FluxInstance; a sync of another path, or of
// another name, does not stand for it.
func TestReadInstanceSyncingTheEntryFromElsewhere(t *testing.T) {
	sync := func(name, path string) string {
		return "  sync:\n    kind: GitRepository\n    name: " + name + "\n    url: https://git.example.com/home.git\n    ref: refs/heads/main\n    path: " + path + "\n"
	}
	files := map[string]string{
		"kubernetes/flux/cluster/ks.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec: {interval: 1h, path: ./kubernetes/apps, prune: true, sourceRef: {kind: GitRepository, name: home-kubernetes}}
`,
		"kubernetes/apps/kustomization.yaml": "resources: [web/config.yaml]\n",
		"kubernetes/apps/web/config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\n",
	}
	for _, c := range []struct {
		name, file, text string
		read             bool
	}{
		{"values file", "kubernetes/apps/flux-system/flux-instance/app/helm-values.yaml", "instance:\n" + sync("home-kubernetes", "kubernetes/flux/cluster"), true},
		{"release values", "kubernetes/apps/flux-system/flux-instance/app/helmrelease.yaml",
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: flux-instance, namespace: flux-system}\nspec:\n  values:\n    instance:\n" +
				"    " + strings.ReplaceAll(sync("home-kubernetes", "./kubernetes/flux/cluster"), "\n  ", "\n      "), true},
		{"instance", "bootstrap/flux-instance.yaml", "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec:\n" + sync("home-kubernetes", "kubernetes/flux/cluster"), true},
		{"another path", "kubernetes/apps/flux-system/flux-instance/app/helm-values.yaml", "instance:\n" + sync("home-kubernetes", "kubernetes/flux/other"), false},
		{"another name", "kubernetes/apps/flux-system/flux-instance/app/helm-values.yaml", "instance:\n" + sync("home-ops", "kubernetes/flux/cluster"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
			testutil.WriteFiles(t, dir, files)
			testutil.WriteFiles(t, dir, map[string]string{c.file: c.text})
			repo, err := fluxrepo.Read(t.Context(), filepath.Join(dir, "kubernetes", "flux", "cluster"))
			require.NoError(t, err)
			defer repo.Close()
			require.Len(t, repo.Plan.Layers, 2)
			apps := repo.Inputs[1]
			if !c.read {
				assert.Nil(t, apps.Source)
				assert.Contains(t, apps.Unavailable, "GitRepository/flux-system/home-kubernetes")
				assert.Equal(t, "flux-system", repo.Plan.Layers[0].Name)
				return
			}
			require.NotNil(t, apps.Source, apps.Unavailable)
			root := repo.Plan.Layers[0]
			assert.Equal(t, "home-kubernetes", root.Kustomization.Name)
			assert.Equal(t, "home-kubernetes", root.Kustomization.Spec.SourceRef.Name)
			assert.Equal(t, c.file, root.File)
			assert.Equal(t, "cluster-apps", repo.Plan.Layers[1].Name)
			assert.Len(t, apps.Objects, 1)
		})
	}
}
