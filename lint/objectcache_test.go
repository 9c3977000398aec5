package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// The first lint of an object reads it; the others get copies of what it
// took, with their own file and an object of their own to set more on.
func TestObjectCacheReadsOnce(t *testing.T) {
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  replicas: ${replicas}\n"), &doc))
	orig := &fluxbuild.Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "web", File: "web.yaml", Line: 1, Node: doc.Content[0], Dollar: true}
	c := NewObjectCache()

	first := *orig
	first.File = "head/web.yaml"
	a := c.read(orig, &first)
	second := *orig
	second.File = "base/web.yaml"
	b := c.read(orig, &second)

	require.NotSame(t, a, b, "each lint sets more on its objects")
	require.Equal(t, "head/web.yaml", a.File)
	require.Equal(t, "base/web.yaml", b.File)
	require.Nil(t, a.Node, "a Deployment's node is let go")
	require.Nil(t, b.Node, "the second lint lets go as the first did")
	require.Same(t, a.uses, b.uses, "read once: the second lint has the first's uses")
	require.NotNil(t, a.uses)
	require.Same(t, doc.Content[0], orig.Node, "the caller's object keeps its node")

	a.rendered = true
	require.False(t, b.rendered)
	require.False(t, c.read(orig, new(*orig)).rendered, "what one lint sets is not in the cache")

	// A kind whose node a rule reads keeps it, in every lint.
	require.NoError(t, yaml.Unmarshal([]byte("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: apps}\nspec: {}\n"), &doc))
	hr := &fluxbuild.Object{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Namespace: "apps", Name: "web", Node: doc.Content[0]}
	x, y := *hr, *hr
	require.Same(t, hr.Node, c.read(hr, &x).Node)
	require.Same(t, hr.Node, c.read(hr, &y).Node)

	var none *ObjectCache // no cache: read here
	z := *orig
	require.NotNil(t, none.read(orig, &z).uses)

	_, err := newConfig([]Option{WithObjectCache(nil)})
	require.ErrorIs(t, err, ErrInvalidOption)
}

// The lints given one cache build a bootstrap kustomization once: the
// second lint counts what the first built, even after the folder changed
// (the sides of a review are given the same folders, as they were), and a
// lint without the cache builds it anew.
func TestObjectCacheBuildsBootstrapOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [ns.yaml]\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "ns.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}\n"), 0o644))
	}
	bootstrap := func(opts ...Option) []string {
		cfg, err := newConfig(append([]Option{WithBootstrapKustomization(dir)}, opts...))
		require.NoError(t, err)
		l := &linter{cfg: cfg}
		l.applyBootstrapDirs(t.Context())
		return l.cfg.existingNamespaces
	}
	write("first")
	c := NewObjectCache()
	require.Equal(t, []string{"first"}, bootstrap(WithObjectCache(c)))
	write("second")
	require.Equal(t, []string{"first"}, bootstrap(WithObjectCache(c)), "built once for the lints given the cache")
	require.Equal(t, []string{"second"}, bootstrap(), "built anew without it")
}
