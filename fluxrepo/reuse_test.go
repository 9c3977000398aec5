package fluxrepo_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
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

// The lints of a repository and of a second read that reuses its objects
// share what they take of them (lint.WithObjectCache, as a review does),
// run at once, and report what each reports alone, on every fixture.
func TestLintsShareReusedObjects(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			root := filepath.Join("testdata", "repos", f.repo)
			repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)...)
			require.NoError(t, err)
			defer repo.Close()
			alone, err := lint.Repository(t.Context(), repo, f.lintOptions(t)...)
			require.NoError(t, err)
			shared := append(f.lintOptions(t), lint.WithObjectCache(lint.NewObjectCache()))
			head, err := fluxrepo.Read(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)...)
			require.NoError(t, err)
			defer head.Close()
			base, err := fluxrepo.Read(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithReuse(head, nil)}, f.opts...)...)
			require.NoError(t, err)
			defer base.Close()
			var reps [2]*lint.Report
			var errs [2]error
			var wg sync.WaitGroup
			for i, r := range []*fluxrepo.Repository{head, base} {
				wg.Go(func() { reps[i], errs[i] = lint.Repository(t.Context(), r, shared...) })
			}
			wg.Wait()
			for i := range reps {
				require.NoError(t, errs[i])
				require.Equal(t, alone.Findings, reps[i].Findings)
				require.Equal(t, alone.Coverage, reps[i].Coverage)
				require.Equal(t, alone.Summary(), reps[i].Summary())
			}
		})
	}
}
