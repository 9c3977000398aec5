package fluxrepo_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// gitRepo is a GitRepository of the fixtures below.
func gitRepo(name, url, ref, ignore string) string {
	s := "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: " + name + ", namespace: flux-system}\nspec:\n  interval: 10m\n  url: " + url + "\n"
	if ref != "" {
		s += "  ref: {branch: " + ref + "}\n"
	}
	if ignore != "" {
		s += "  ignore: |\n    " + ignore + "\n"
	}
	return s
}

// gitKs is a Kustomization of the fixtures below.
func gitKs(name, path, source string) string {
	return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\nspec: {interval: 1h, path: " + path + ", prune: true, sourceRef: {kind: GitRepository, name: " + source + "}}\n"
}

// unavailable returns the layers repo could not read, by name.
func unavailable(repo *fluxrepo.Repository) []string {
	var out []string
	for i, l := range repo.Plan.Layers {
		if repo.Inputs[i].Source == nil {
			out = append(out, l.Name)
		}
	}
	slices.Sort(out)
	return out
}

// An entry point that applies itself through a GitRepository it defines
// (flux bootstrap's gotk-sync.yaml under another name: home-kubernetes,
// and a Kustomization cluster whose path is the entry point) reads the
// repository itself through it, whatever its url: the layers it feeds are
// read from the working tree, not left unread as another source. Found on
// a public home-ops repository whose FluxInstance syncs the folder, where
// 81 of 83 layers went unread.
func TestReadSelfAppliedSource(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	testutil.WriteFiles(t, dir, map[string]string{
		"kubernetes/flux/config/kustomization.yaml": "resources: [cluster.yaml]\n",
		"kubernetes/flux/config/cluster.yaml":       gitRepo("home-kubernetes", "https://github.com/example/home-ops", "main", "") + "---\n" + gitKs("cluster", "./kubernetes/flux", "home-kubernetes"),
		"kubernetes/flux/apps.yaml":                 gitKs("apps", "./kubernetes/apps", "home-kubernetes") + "---\n" + gitKs("elsewhere", "./x", "other"),
		"kubernetes/apps/config.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
	})
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(dir, "kubernetes", "flux"))
	require.NoError(t, err)
	defer repo.Close()
	assert.Equal(t, "cluster", repo.Plan.Layers[0].Name, "the Kustomization that applies the entry point is the root layer")
	assert.Equal(t, []string{"elsewhere"}, unavailable(repo), "home-kubernetes is the repository; another GitRepository is not")
}

// A GitRepository of the tree that fetches the repository a source read
// from the root fetches (the same url, whatever the scheme, user, .git
// or case, at the same reference) is the repository too, its own ignore
// rules applied; at another branch, or of another url, it is not.
func TestReadSameRepositorySource(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	testutil.WriteFiles(t, dir, map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": gitRepo("flux-system", "ssh://git@github.com/Example/home-ops", "main", "") + "---\n" + gitKs("flux-system", "./clusters/prod", "flux-system"),
		"clusters/prod/sources.yaml": gitRepo("same", "https://github.com/example/home-ops.git/", "main", "/apps/skipped.yaml") + "---\n" +
			gitRepo("other-branch", "https://github.com/example/home-ops", "dev", "") + "---\n" +
			gitRepo("other-repo", "https://github.com/example/other", "main", ""),
		"clusters/prod/apps.yaml": gitKs("apps", "./apps", "same") + "---\n" + gitKs("dev", "./apps", "other-branch") + "---\n" + gitKs("other", "./apps", "other-repo"),
		"apps/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
		"apps/skipped.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped, namespace: default}\n",
	})
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(dir, "clusters", "prod"))
	require.NoError(t, err)
	defer repo.Close()
	assert.Equal(t, []string{"dev", "other"}, unavailable(repo))
	i := slices.IndexFunc(repo.Plan.Layers, func(l layering.Layer) bool { return l.Name == "apps" })
	require.GreaterOrEqual(t, i, 0)
	var names []string
	for _, o := range repo.Inputs[i].Objects {
		names = append(names, o.Name)
	}
	assert.Equal(t, []string{"app"}, names, "the GitRepository's ignore rule leaves skipped.yaml out")
}
