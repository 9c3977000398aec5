package fluxrepo_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

// WithReuse takes the layers not named changed from the previous read,
// and builds the others, and every layer whose spec differs.
func TestReadWithReuse(t *testing.T) {
	files := map[string]string{
		"clusters/c/layers.yaml": ks("a", "./a", "") + "---\n" + ks("b", "./b", "") + "---\n" + ks("c", "./c", ""),
		"a/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {v: one}\n",
		"b/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: default}\ndata: {v: one}\n",
		"c/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {v: one}\n",
	}
	head := write(t, files)
	files["a/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {v: two}\n"
	files["b/cm.yaml"] = files["a/cm.yaml"]
	files["clusters/c/layers.yaml"] = ks("a", "./a", "") + "---\n" + ks("b", "./b", "") + "---\n" + ks("c", "./c", "  wait: true\n")
	base := write(t, files)

	prev, err := fluxrepo.Read(t.Context(), filepath.Join(head, "clusters/c"), fluxrepo.WithRoot(head))
	require.NoError(t, err)
	defer prev.Close()
	// "b" is wrongly left out of changed: its head objects are reused,
	// which shows the caller's changed set decides.
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(base, "clusters/c"), fluxrepo.WithRoot(base),
		fluxrepo.WithReuse(prev, map[string]bool{"a": true, "flux-system": true}))
	require.NoError(t, err)
	defer repo.Close()
	value := func(r *fluxrepo.Repository, layer string) (string, bool) {
		for i, l := range r.Plan.Layers {
			if l.Name == layer {
				o := r.Inputs[i].Objects[0]
				shared := false
				for j, pl := range prev.Plan.Layers {
					if pl.Name == layer && len(prev.Inputs[j].Objects) > 0 {
						shared = prev.Inputs[j].Objects[0] == o
					}
				}
				data := o.Node.Content[len(o.Node.Content)-1] // data: {v: …}
				return data.Content[1].Value, shared
			}
		}
		return "", false
	}
	v, shared := value(repo, "a")
	assert.Equal(t, "two", v, "a is changed: built from the base")
	assert.False(t, shared)
	v, shared = value(repo, "b")
	assert.Equal(t, "one", v, "b is not named changed: reused from the previous read")
	assert.True(t, shared)
	_, shared = value(repo, "c")
	assert.False(t, shared, "c's spec differs (wait): built again")

	_, err = fluxrepo.Read(t.Context(), filepath.Join(base, "clusters/c"), fluxrepo.WithReuse(nil, nil))
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
}
