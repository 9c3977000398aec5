package fluxrepo_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/render"
)

// A tree that applies no Kustomization (a flux-operator cluster's folder
// of FluxInstance and ResourceSets) has nothing to import, and says so.
func TestImportNothingToImport(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c/instance.yaml": "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec: {distribution: {version: 2.x}}\n",
	})
	_, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	require.Error(t, err)
	assert.ErrorContains(t, err, "applies no Kustomization, only FluxInstance/flux-system/flux")
	assert.ErrorContains(t, err, "nothing to import")
}

// Every fixture repository (and the opt-in one: suspended layers, a
// tenant, a layer of another Git repository), imported to a stack file in
// a folder below its root, renders from there: the stack the import
// writes is one render accepts, its paths found from the file.
func TestImportedFixturesRender(t *testing.T) {
	all := append(slices.Clone(fixtures), fixture{name: "opt-in", repo: "opt-in", entry: "clusters/prod"})
	for _, f := range all {
		if strings.HasSuffix(f.name, "-undeclared") {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join("testdata", "repos", f.repo))))
			stack := filepath.Join(root, "platform", "imported", "stack.yaml")
			imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithStackFile(stack)}, f.opts...)...)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(stack), 0o755))
			require.NoError(t, os.WriteFile(stack, imp.Stack, 0o644))
			r, err := render.StackFile(t.Context(), stack, filepath.Join(t.TempDir(), "flux"))
			require.NoError(t, err, "render of the stack imported from %s:\n%s", f.entry, imp.Stack)
			assert.NotEmpty(t, r.Plan.Layers)
		})
	}
}

// A suspended Kustomization whose path holds more Kustomizations (seed
// 003's opt-in LLM platform) creates none of them on a fresh cluster: the
// stack import writes must not deploy them either. Rendered, the stack's
// layers that a fresh cluster reconciles (not suspended, every dependency
// reconciled: kustomize-controller holds a Kustomization whose dependency
// has never been Ready) are the platform's and none of the umbrella's. The
// near miss: without suspend, the umbrella holds nothing back, and import
// invents no gate.
func TestImportKeepsSuspendedGates(t *testing.T) {
	gated := []string{"llm-platform", "llm-platform-apps", "llm-platform-gpu-nodepools", "llm-platform-security-epi", "vllm-router", "vllm-router-app"}
	platform := []string{"apps", "infrastructure", "karpenter-nodepools"}
	// freshCluster imports the repository at root, renders the stack, and
	// returns the layers a fresh cluster reconciles, and those that depend
	// on llm-platform.
	freshCluster := func(t *testing.T, root string) (reconciled, held []string) {
		t.Helper()
		stack := filepath.Join(root, "stack.yaml")
		imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/mycluster-0"), fluxrepo.WithRoot(root), fluxrepo.WithStackFile(stack))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(stack, imp.Stack, 0o644))
		r, err := render.StackFile(t.Context(), stack, filepath.Join(t.TempDir(), "flux"))
		require.NoError(t, err)
		ready := map[string]bool{}
		notReady := func(d kustomizev1.DependencyReference) bool { return !ready[d.Name] }
		for changed := true; changed; {
			changed = false
			for _, l := range r.Plan.Layers {
				k := l.Kustomization
				if !ready[k.Name] && !k.Spec.Suspend && !slices.ContainsFunc(k.Spec.DependsOn, notReady) {
					ready[k.Name], changed = true, true
				}
			}
		}
		for _, l := range r.Plan.Layers {
			if slices.ContainsFunc(l.Kustomization.Spec.DependsOn, func(d kustomizev1.DependencyReference) bool { return d.Name == "llm-platform" }) {
				held = append(held, l.Name)
			}
		}
		return slices.Sorted(maps.Keys(ready)), held
	}

	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join("testdata", "repos", "suspended-umbrella"))))
	reconciled, held := freshCluster(t, root)
	assert.Equal(t, platform, reconciled, "a fresh cluster reconciles the platform, and nothing llm-platform holds back")
	assert.Equal(t, gated[1:], slices.Sorted(slices.Values(held)), "every Kustomization below llm-platform waits for it")

	edit{"clusters/mycluster-0/llm-platform.yaml", "  suspend: true\n", ""}.apply(t, root)
	reconciled, held = freshCluster(t, root)
	assert.Equal(t, slices.Sorted(slices.Values(slices.Concat(gated, platform))), reconciled, "resumed, llm-platform applies everything")
	assert.Empty(t, held, "no gate without suspend")
}

// A suspended Kustomization that waits for what it applies cannot gate
// its children in a stack: they would depend on it while it waits for
// them. Import refuses, naming it and them, rather than letting them out.
func TestImportRefusesGateThatWaits(t *testing.T) {
	for name, extra := range map[string]string{
		"wait":         "  suspend: true\n  wait: true\n",
		"health check": "  suspend: true\n  healthChecks:\n    - apiVersion: kustomize.toolkit.fluxcd.io/v1\n      kind: Kustomization\n      name: gpu\n      namespace: flux-system\n",
	} {
		t.Run(name, func(t *testing.T) {
			root := write(t, map[string]string{
				"clusters/c/gate.yaml":     ks("opt-in", "./opt-in", extra),
				"opt-in/gpu.yaml":          ks("gpu", "./gpu", ""),
				"gpu/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gpu, namespace: default}\n",
				"clusters/c/platform.yaml": ks("platform", "./gpu", ""),
			})
			_, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
			require.Error(t, err)
			assert.ErrorContains(t, err, "Kustomization/flux-system/opt-in: suspended (spec.suspend: true), it holds back gpu")
			assert.ErrorContains(t, err, "they would wait for it while it waits for them")
		})
	}
}

// Flux accepts wait: true beside spec.healthChecks and then ignores the
// health checks: it checks every object the Kustomization applies. Import
// takes the Kustomization as Flux reads it: the layer keeps wait: true,
// leaves the health checks out, and a Difference says they were ignored.
// Without wait, the health checks are the layer's, and nothing is said.
func TestImportWaitIgnoresHealthChecks(t *testing.T) {
	const checks = "  healthChecks:\n    - apiVersion: helm.toolkit.fluxcd.io/v2\n      kind: HelmRelease\n      name: ingress\n      namespace: edge\n"
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("wait: %t", wait), func(t *testing.T) {
			extra := checks
			if wait {
				extra = "  wait: true\n" + checks
			}
			root := write(t, map[string]string{
				"clusters/c/edge.yaml": ks("edge", "./edge", extra),
				"clusters/c/apps.yaml": ks("apps", "./apps", "  dependsOn:\n    - name: edge\n"),
				"edge/ns.yaml":         "apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n",
				"apps/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\n",
			})
			stack := filepath.Join(root, "stack.yaml")
			imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root), fluxrepo.WithStackFile(stack))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(stack, imp.Stack, 0o644))
			r, err := render.StackFile(t.Context(), stack, filepath.Join(t.TempDir(), "flux"))
			require.NoError(t, err, "%s", imp.Stack)
			var edge *kustomizev1.Kustomization
			for _, l := range r.Plan.Layers {
				if l.Name == "edge" {
					edge = l.Kustomization
				}
			}
			require.NotNil(t, edge)
			diffs := strings.Join(imp.Differences, "\n")
			assert.NotContains(t, diffs, "renders differently")
			assert.Equal(t, wait, edge.Spec.Wait)
			if wait {
				assert.Empty(t, edge.Spec.HealthChecks, "Flux ignores them")
				assert.Contains(t, diffs, "Kustomization/flux-system/edge: spec.healthChecks not imported: with wait: true, Flux ignores them")
				return
			}
			require.Len(t, edge.Spec.HealthChecks, 1)
			assert.Equal(t, "ingress", edge.Spec.HealthChecks[0].Name)
			assert.NotContains(t, diffs, "healthChecks")
		})
	}
}

// A Kustomization without spec.path applies its source's root, as Flux
// reads it (here an ExternalArtifact an ArtifactGenerator makes of a
// folder of the repository): import writes the layer's path as ./, and it
// renders so.
func TestImportNoPathIsTheSourceRoot(t *testing.T) {
	web := strings.Replace(fromSource("web", "./", "ExternalArtifact", "web-bundle"), "  path: ./\n", "", 1)
	require.NotContains(t, web, "path:")
	root := write(t, map[string]string{
		"clusters/c/artifacts.yaml": "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: bundles, namespace: flux-system}\nspec:\n" +
			"  sources: [{alias: repo, kind: GitRepository, name: flux-system}]\n  artifacts:\n    - name: web-bundle\n      copy: [{from: \"@repo/web/**\", to: \"@artifact/\"}]\n",
		"clusters/c/web.yaml": web,
		"web/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\n",
	})
	stack := filepath.Join(root, "stack.yaml")
	imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root), fluxrepo.WithStackFile(stack))
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(imp.Differences, "\n"), "renders differently")
	require.NoError(t, os.WriteFile(stack, imp.Stack, 0o644))
	r, err := render.StackFile(t.Context(), stack, filepath.Join(t.TempDir(), "flux"))
	require.NoError(t, err, "%s", imp.Stack)
	require.Len(t, r.Plan.Layers, 1)
	k := r.Plan.Layers[0].Kustomization
	assert.Equal(t, "./", k.Spec.Path)
	assert.Equal(t, "ExternalArtifact", k.Spec.SourceRef.Kind)
}
