package fluxbuild

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Builds that share a Snapshot ask the disk once: two layers taking a
// component from the cache read its files once between them, so a change
// made after the first asked is not seen by the second (the snapshot's
// promise is that nothing changes while its builds run), and is seen
// with a new snapshot. The same for a .sourceignore file above a folder
// Flux generates a kustomization for.
func TestSnapshotAnswersOnce(t *testing.T) {
	root := cacheTree(t, t.TempDir(), map[string]string{
		"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: [{path: patch.yaml}]\n",
		"comp/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {level: info}\n",
		"a/kustomization.yaml":    cacheKus + "resources: [cm.yaml]\ncomponents: [../comp]\nnamePrefix: a-\n",
		"a/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
		"b/kustomization.yaml":    cacheKus + "resources: [cm.yaml]\ncomponents: [../comp]\nnamePrefix: b-\n",
		"b/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
		"plain/one.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n",
		"plain/two.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n",
	})
	cache := t.TempDir()
	src := Source{Dir: root}
	ks := func(path string) *kustomizev1.Kustomization {
		return &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: path}}
	}
	level := func(t *testing.T, objs []*Object) string {
		t.Helper()
		require.Len(t, objs, 1)
		return yamlutil.Str(objs[0].Node, "data", "level")
	}
	names := func(objs []*Object) (out []string) {
		for _, o := range objs {
			out = append(out, o.Name)
		}
		return out
	}
	for _, p := range []string{"./a", "./b"} { // kept in the cache
		_, err := Build(t.Context(), src, ks(p), WithCache(cache))
		require.NoError(t, err)
	}

	snap := NewSnapshot()
	a, err := Build(t.Context(), src, ks("./a"), WithCache(cache), WithSnapshot(snap))
	require.NoError(t, err)
	assert.Equal(t, "info", level(t, a))
	plain, err := Build(t.Context(), src, ks("./plain"), WithSnapshot(snap))
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, names(plain))

	cacheTree(t, root, map[string]string{
		"comp/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {level: debug}\n",
		".sourceignore":   "plain/two.yaml\n",
	})
	b, err := Build(t.Context(), src, ks("./b"), WithCache(cache), WithSnapshot(snap))
	require.NoError(t, err)
	assert.Equal(t, "info", level(t, b), "the snapshot's answer: the component as the first build read it")
	plain, err = Build(t.Context(), src, ks("./plain"), WithSnapshot(snap))
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, names(plain), "the snapshot's answer: no .sourceignore")

	fresh := NewSnapshot()
	b, err = Build(t.Context(), src, ks("./b"), WithCache(cache), WithSnapshot(fresh))
	require.NoError(t, err)
	assert.Equal(t, "debug", level(t, b), "a new snapshot sees the change")
	plain, err = Build(t.Context(), src, ks("./plain"), WithSnapshot(fresh))
	require.NoError(t, err)
	assert.Equal(t, []string{"one"}, names(plain), "and the .sourceignore")
	b, err = Build(t.Context(), src, ks("./b"), WithCache(cache))
	require.NoError(t, err)
	assert.Equal(t, "debug", level(t, b), "as a build without one does")
}

func TestWithSnapshotValidates(t *testing.T) {
	_, err := Build(t.Context(), Source{Dir: t.TempDir()}, &kustomizev1.Kustomization{}, WithSnapshot(nil))
	assert.ErrorIs(t, err, ErrInvalidOption)
}
