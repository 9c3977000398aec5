package fluxrepo

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/substitute"
)

// What the memo gives is what substituteOne makes, a Kustomization of the
// caller's own each time; another parent's variables are another key; and
// it keeps no more than its bounds.
func TestSubstitutedMemo(t *testing.T) {
	m := &substMemo{}
	obj := func(name string) *fluxbuild.Object {
		n := &yaml.Node{}
		require.NoError(t, yaml.Unmarshal([]byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: "+name+"-${APP}\n  namespace: flux-system\nspec:\n  path: ./apps/${APP}\n  interval: 1h\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n"), n))
		return &fluxbuild.Object{Kind: "Kustomization", Name: name + "-${APP}", Node: n.Content[0], Dollar: true}
	}
	sub := func(app string) (*substitute.Substituter, string) {
		parent := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
			Spec: kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{Substitute: map[string]string{"APP": app}}}}
		s, err := substitute.NewSubstituter(parent)
		require.NoError(t, err)
		key, err := s.Key()
		require.NoError(t, err)
		return s, key
	}
	s, key := sub("shop")
	first := m.get(s, key, obj("web"))
	require.NoError(t, first.err)
	require.NotNil(t, first.ks)
	assert.Equal(t, "web-shop", first.ks.Name)
	assert.Equal(t, "./apps/shop", first.ks.Spec.Path)
	assert.Equal(t, substituteOne(s, obj("web")), first)
	first.ks.Name = "changed by the caller"
	again := m.get(s, key, obj("web"))
	assert.Equal(t, "web-shop", again.ks.Name, "a hit is the caller's own copy")
	assert.EqualValues(t, 1, m.Len())

	s2, key2 := sub("blog")
	assert.NotEqual(t, key, key2)
	assert.Equal(t, "web-blog", m.get(s2, key2, obj("web")).ks.Name)
	assert.Equal(t, "web-blog", m.get(s2, "", obj("web")).ks.Name, "no key: substituted, not kept")
	assert.EqualValues(t, 2, m.Len())

	m.Max = 3
	for _, name := range []string{"a", "b", "c", "d"} {
		assert.Equal(t, name+"-shop", m.get(s, key, obj(name)).ks.Name)
	}
	assert.EqualValues(t, 3, m.Len(), "bounded by number")
	m.Max, m.MaxBytes = 100, m.Bytes()
	m.get(s, key, obj("e"))
	assert.EqualValues(t, 3, m.Len(), "bounded by bytes")
}
