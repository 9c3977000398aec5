package substitute

import (
	"slices"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/provider"
)

// What Render makes of an object is kept in a RenderMemo by the
// Kustomization's name, namespace, commonMetadata and substitutions
// (redacted or not) and the object's JSON: rendered again under any other
// Kustomization, the object renders as it does with no memo, and under
// the same one it is taken from the memo.
func TestRenderMemo(t *testing.T) {
	objects := `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-${APP}
  namespace: shop
data:
  region: ${region:=eu}
  token: ${token:=none}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules: []
`
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "flux-system"},
		Data:       map[string][]byte{"token": []byte("s3cr3t")},
	}
	src, err := NewSources(secret)
	require.NoError(t, err)
	ks := func(name, app string, labels map[string]string, from bool) *kustomizev1.Kustomization {
		k := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"},
			Spec:       kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{Substitute: map[string]string{"APP": app}}},
		}
		if labels != nil {
			k.Spec.CommonMetadata = &kustomizev1.CommonMetadata{Labels: labels}
		}
		if from {
			k.Spec.PostBuild.SubstituteFrom = []kustomizev1.SubstituteReference{{Kind: "Secret", Name: "creds"}}
		}
		return k
	}
	type variant struct {
		name string
		ks   *kustomizev1.Kustomization
		opts []RenderOption
	}
	variants := []variant{
		{"as written", ks("a", "x", nil, false), nil},
		{"another name", ks("b", "x", nil, false), nil},
		{"other variables", ks("a", "y", nil, false), nil},
		{"commonMetadata", ks("a", "x", map[string]string{"team": "t"}, false), nil},
		{"from a Secret", ks("a", "x", nil, true), []RenderOption{WithSources(src)}},
		{"from a Secret, redacted", ks("a", "x", nil, true), []RenderOption{WithSources(src), WithRedactedSecrets()}},
		{"no postBuild", &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "flux-system"}}, nil},
	}
	render := func(v variant, m *RenderMemo) string {
		ress, err := provider.NewDefaultDepProvider().GetResourceFactory().SliceFromBytes([]byte(objects))
		require.NoError(t, err)
		opts := v.opts
		if m != nil {
			opts = append(slices.Clone(opts), WithRenderMemo(m))
		}
		out, err := Render(v.ks, ress, opts...)
		require.NoError(t, err, v.name)
		return string(out)
	}
	want := map[string]string{}
	for _, v := range variants {
		want[v.name] = render(v, nil)
	}
	assert.NotEqual(t, want["as written"], want["another name"])
	assert.Contains(t, want["from a Secret"], "s3cr3t")
	assert.NotContains(t, want["from a Secret, redacted"], "s3cr3t")

	m := &RenderMemo{}
	for round := range 2 {
		for _, v := range variants {
			assert.Equal(t, want[v.name], render(v, m), "round %d: %s", round, v.name)
		}
		if round == 0 {
			assert.Positive(t, m.m.Len(), "nothing kept")
		}
	}
	kept := m.m.Len()
	render(variants[0], m)
	assert.Equal(t, kept, m.m.Len(), "rendered again, an object is kept again")

	_, err = Render(variants[0].ks, nil, WithRenderMemo(nil))
	assert.ErrorIs(t, err, ErrInvalidOption)
}
