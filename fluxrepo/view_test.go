package fluxrepo_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/layering"
)

// layerOf returns the index of layer name in repo.
func layerOf(t *testing.T, repo *fluxrepo.Repository, name string) int {
	t.Helper()
	i := slices.IndexFunc(repo.Plan.Layers, func(l layering.Layer) bool { return l.Name == name })
	require.GreaterOrEqual(t, i, 0, "no layer %s", name)
	return i
}

func objectNames(repo *fluxrepo.Repository, i int) []string {
	var out []string
	for _, o := range repo.Inputs[i].Objects {
		out = append(out, o.Kind+"/"+o.Name)
	}
	return out
}

// rels names absolute paths by their path under dir.
func rels(dir string, ps []string) []string {
	var out []string
	for _, p := range ps {
		r, err := filepath.Rel(dir, p)
		if err != nil {
			r = p
		}
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

// What each layer sees of the repository (Views): the files an
// ExternalArtifact's copy rules put where, those a GitRepository's
// include moves in, those ignore rules leave out.
func TestViews(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	root := write(t, map[string]string{
		"clusters/c/sources.yaml": gitSource("flux-system", "https://git.example.com/platform", "") +
			"---\n" + gitSource("tenant", "https://git.example.com/tenant", "  include:\n    - repository: {name: flux-system}\n      fromPath: shared\n      toPath: lib\n  ignore: |\n    /lib/drafts/\n") +
			"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: bundle, namespace: flux-system}\nspec: {interval: 10m, url: oci://registry.example.com/bundle, ref: {tag: v1}, ignore: \"/drafts/\\n\"}\n" +
			"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: raw, namespace: flux-system}\nspec: {interval: 10m, url: oci://registry.example.com/raw, ref: {tag: v1}, ignore: \"/drafts/\\n\", layerSelector: {mediaType: application/vnd.cncf.flux.content.v1.tar+gzip, operation: copy}}\n" +
			"---\napiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\nspec:\n  sources: [{alias: repo, kind: GitRepository, name: flux-system}]\n  artifacts:\n" +
			"    - name: apps\n      namespace: apps\n      copy:\n        - {from: \"@repo/apps/**\", to: \"@artifact/\", exclude: [\"*.md\"]}\n        - {from: \"@repo/overrides/web.yaml\", to: \"@artifact/web/cm.yaml\"}\n" +
			"    - name: broken\n      copy:\n        - {from: \"@repo/nothing/*.yaml\", to: \"@artifact/\"}\n",
		"clusters/c/layers.yaml": fromSource("apps", "./web", "ExternalArtifact", "apps") + "    namespace: apps\n" +
			"---\n" + fromSource("tenant", "./lib", "GitRepository", "tenant") +
			"---\n" + fromSource("bundle", "./", "OCIRepository", "bundle") +
			"---\n" + fromSource("raw", "./", "OCIRepository", "raw") +
			"---\n" + fromSource("broken", "./", "ExternalArtifact", "broken") +
			"---\n" + ks("local", "./local", ""),
		"apps/web/cm.yaml":      cm("web"),
		"apps/web/README.md":    "# web\n",
		"overrides/web.yaml":    cm("web-override"),
		"shared/a.yaml":         cm("shared-a"),
		"shared/drafts/b.yaml":  cm("shared-draft"),
		"shared/.sourceignore":  "*.md\n",
		"shared/notes.md":       "notes\n",
		"local/.sourceignore":   "/skip/\n",
		"local/cm.yaml":         cm("local"),
		"local/skip/cm.yaml":    cm("skipped"),
		"bundle/cm.yaml":        cm("bundle"),
		"bundle/drafts/cm.yaml": cm("bundle-draft"),
	})
	tenant := write(t, map[string]string{"deploy/cm.yaml": cm("tenant")})
	ref := func(kind, name string) fluxrepo.SourceRef {
		return fluxrepo.SourceRef{Kind: kind, Namespace: "flux-system", Name: name}
	}
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root),
		fluxrepo.WithSource(ref("GitRepository", "tenant"), tenant),
		fluxrepo.WithSource(ref("OCIRepository", "bundle"), filepath.Join(root, "bundle")),
		fluxrepo.WithSource(ref("OCIRepository", "raw"), filepath.Join(root, "bundle")))
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	require.Len(t, repo.Views, len(repo.Plan.Layers))

	t.Run("an ExternalArtifact holds what its copies select, where they put it", func(t *testing.T) {
		i := layerOf(t, repo, "apps")
		v := repo.Views[i]
		assert.Empty(t, repo.Inputs[i].Unavailable)
		assert.ElementsMatch(t, []string{"ConfigMap/web-override"}, objectNames(repo, i), "the later copy overwrote web/cm.yaml")
		assert.Empty(t, v.Paths("apps/web/README.md"), "excluded by the copy")
		assert.Empty(t, v.Paths("apps/web/cm.yaml"), "overwritten by a later copy")
		assert.Equal(t, []string{"web/cm.yaml"}, rels(v.Dir, v.Paths("overrides/web.yaml")))
		assert.Equal(t, []string{"overrides/web.yaml"}, v.Origins(filepath.Join(v.Dir, "web", "cm.yaml")))
		assert.Contains(t, v.Sources(), fluxrepo.SourceRef{Kind: "ArtifactGenerator", Namespace: "flux-system", Name: "gen"}, "the artifact's namespace is its own (apps), the generator's flux-system")
		assert.Contains(t, v.Sources(), ref("GitRepository", "flux-system"))
		assert.True(t, v.MadeFrom("anything/at/all.yaml"), "made from the repository's root")
	})

	t.Run("a GitRepository's include holds the included artifact at toPath, its ignore rules after", func(t *testing.T) {
		i := layerOf(t, repo, "tenant")
		v := repo.Views[i]
		assert.Empty(t, repo.Inputs[i].Unavailable)
		assert.ElementsMatch(t, []string{"ConfigMap/shared-a"}, objectNames(repo, i), "drafts left out by the tenant's spec.ignore")
		assert.Equal(t, []string{"lib/a.yaml"}, rels(v.Dir, v.Paths("shared/a.yaml")))
		assert.Empty(t, v.Paths("shared/drafts/b.yaml"), "the including repository's spec.ignore")
		assert.Empty(t, v.Paths("shared/notes.md"), "the included repository's own .sourceignore")
		assert.Empty(t, v.Paths("apps/web/cm.yaml"), "only fromPath is included")
		assert.Contains(t, v.Sources(), ref("GitRepository", "flux-system"))
	})

	t.Run("an OCIRepository's ignore rules apply when its layer is extracted, not when it is copied", func(t *testing.T) {
		assert.ElementsMatch(t, []string{"ConfigMap/bundle"}, objectNames(repo, layerOf(t, repo, "bundle")))
		assert.ElementsMatch(t, []string{"ConfigMap/bundle", "ConfigMap/bundle-draft"}, objectNames(repo, layerOf(t, repo, "raw")))
		v := repo.Views[layerOf(t, repo, "bundle")]
		assert.True(t, v.Ignored(v.Dir, filepath.Join(v.Dir, "drafts", "cm.yaml")))
		assert.Equal(t, []string{"cm.yaml"}, rels(v.Dir, v.Paths("bundle/cm.yaml")))
	})

	t.Run("the repository's own folders: ignore rules leave files out of a listing", func(t *testing.T) {
		i := layerOf(t, repo, "local")
		v := repo.Views[i]
		assert.ElementsMatch(t, []string{"ConfigMap/local"}, objectNames(repo, i))
		p := v.Paths("local/skip/cm.yaml")
		require.Len(t, p, 1)
		assert.True(t, v.Ignored(filepath.Join(root, "local"), p[0]))
		assert.False(t, v.Ignored(filepath.Join(root, "local"), v.Paths("local/cm.yaml")[0]))
		assert.True(t, v.Shapes("local/.sourceignore", filepath.Join(root, "local")))
		assert.False(t, v.Shapes("shared/.sourceignore", filepath.Join(root, "local")), "a .sourceignore beside the layer's folder")
	})

	t.Run("an artifact that cannot be made is a failed view of what it is made from", func(t *testing.T) {
		i := layerOf(t, repo, "broken")
		assert.Contains(t, repo.Inputs[i].Unavailable, `no file matches "nothing/*.yaml"`)
		v := repo.Views[i]
		assert.True(t, v.Failed())
		assert.True(t, v.MadeFrom("nothing/new.yaml"), "a file there would make it")
	})
}
