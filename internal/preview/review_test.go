package preview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/review"
)

// TestReviewMatchesFluxBuild is the differential test of diff ENTRY: for
// every fixture change of package review, the producers whose objects
// review reports as changed are exactly those whose output differs
// between the two sides when built by Flux's own path (fluxBuild: Flux's
// generator, kustomize, SubstituteVariables with the side's vars
// ConfigMap) and, for the HelmRelease, by fluxbuild.RenderRelease (held to
// helm-controller's manifest byte for byte by the e2e's H0 cases).
func TestReviewMatchesFluxBuild(t *testing.T) {
	src := filepath.Join("..", "..", "review", "testdata")
	changes, err := os.ReadDir(filepath.Join(src, "changes"))
	require.NoError(t, err)
	require.NotEmpty(t, changes)
	for _, c := range changes {
		t.Run(c.Name(), func(t *testing.T) {
			dir := t.TempDir()
			base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
			require.NoError(t, os.CopyFS(base, os.DirFS(filepath.Join(src, "repo"))))
			require.NoError(t, os.CopyFS(head, os.DirFS(filepath.Join(src, "repo"))))
			overlay(t, filepath.Join(src, "changes", c.Name()), head)

			r, err := review.Compare(t.Context(), base, head, "clusters/prod", review.WithAll())
			require.NoError(t, err)
			require.Empty(t, r.NotRendered)
			var reported []string
			for _, o := range r.Objects {
				for _, p := range []string{o.Producer, o.BaseProducer} {
					if p != "" && !slices.Contains(reported, p) {
						reported = append(reported, p)
					}
				}
			}
			slices.Sort(reported)

			var differ []string
			bks, hks := clusterKustomizations(t, base), clusterKustomizations(t, head)
			for _, name := range unionKeys(bks, hks) {
				b, h := fluxSide(t, base, bks[name]), fluxSide(t, head, hks[name])
				if !bytes.Equal(b, h) {
					differ = append(differ, "Kustomization/flux-system/"+name)
				}
			}
			if !bytes.Equal(releaseManifest(t, base), releaseManifest(t, head)) {
				differ = append(differ, "HelmRelease/widgets/widget-operator")
			}
			slices.Sort(differ)
			assert.Equal(t, differ, reported, "producers whose Flux build differs (-) and those review reports (+)")
		})
	}
}

func overlay(t *testing.T, from, to string) {
	require.NoError(t, filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755))
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	}))
}

// clusterKustomizations reads the fixture's Flux Kustomizations by name.
func clusterKustomizations(t *testing.T, root string) map[string]*kustomizev1.Kustomization {
	out := map[string]*kustomizev1.Kustomization{}
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "clusters", "prod"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "kustomization.yaml" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range splitDocs(data) {
			if !strings.Contains(string(doc), "kind: Kustomization") {
				continue
			}
			ks := &kustomizev1.Kustomization{}
			require.NoError(t, sigyaml.Unmarshal(doc, ks))
			out[ks.Name] = ks
		}
		return nil
	}))
	return out
}

func unionKeys(a, b map[string]*kustomizev1.Kustomization) []string {
	var out []string
	for _, m := range []map[string]*kustomizev1.Kustomization{a, b} {
		for k := range m {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// fluxSide builds ks on one side by Flux's own path, with the side's vars
// ConfigMap as the cluster holds it; nil when the side lacks ks.
func fluxSide(t *testing.T, root string, ks *kustomizev1.Kustomization) []byte {
	if ks == nil {
		return nil
	}
	sources := readSources(t, filepath.Join(root, "clusters", "prod", "vars.yaml"))
	out, err := fluxBuildAt(t, root, ks.Spec.Path, ks, sources)
	require.NoError(t, err, "flux build of %s at %s", ks.Name, root)
	return out
}

// releaseManifest renders the fixture's HelmRelease with its values
// ConfigMap.
func releaseManifest(t *testing.T, root string) []byte {
	data, err := os.ReadFile(filepath.Join(root, "infrastructure", "controllers", "release.yaml"))
	require.NoError(t, err)
	hr := &helmv2.HelmRelease{}
	require.NoError(t, sigyaml.Unmarshal(data, hr))
	values := readSources(t, filepath.Join(root, "infrastructure", "controllers", "values.yaml"))
	rel, err := fluxbuild.RenderRelease(t.Context(), hr, filepath.Join(root, "charts", "widget-operator"), fluxbuild.WithValuesFrom(toRuntime(values)...))
	require.NoError(t, err)
	return rel.Manifest
}
