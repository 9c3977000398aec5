package review_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// The objects a flux-operator ResourceSet generates are the objects of
// its layer, produced by the ResourceSet: a change to its templates or
// inputs is a change to them, on every tenant; a ResourceSet whose inputs
// only the cluster knows is said not to render, and what it generated is
// not shown as removed.
func TestResourceSetObjectsDiffed(t *testing.T) {
	const rs = "ResourceSet/flux-system/tenants"
	f := repoFixtures[slices.IndexFunc(repoFixtures, func(f repoFixture) bool { return f.name == "resourceset" })]
	type change struct {
		id, producer string
		action       review.Action
		field        string // a field path of a change
	}
	for _, tc := range []struct {
		change string
		want   []change
	}{
		{"template-label", []change{
			{"Namespace/a", rs, review.Changed, "metadata.labels.team"},
			{"Namespace/b", rs, review.Changed, "metadata.labels.team"},
		}},
		{"input-added", []change{
			{"Namespace/c", rs, review.Added, ""},
			{"ServiceAccount/c/flux", rs, review.Added, ""},
			{"RoleBinding.rbac.authorization.k8s.io/c/flux", rs, review.Added, ""},
			{"Kustomization.kustomize.toolkit.fluxcd.io/c/apps", rs, review.Added, ""},
			{"ConfigMap/c/settings", "Kustomization/c/apps", review.Added, ""},
		}},
		{"role-ref", []change{
			{"RoleBinding.rbac.authorization.k8s.io/a/flux", rs, review.Changed, "roleRef.name"},
			{"RoleBinding.rbac.authorization.k8s.io/b/flux", rs, review.Changed, "roleRef.name"},
		}},
		{"environment", []change{
			{"Namespace/a", rs, review.Changed, "metadata.labels.environment"},
			{"Namespace/b", rs, review.Changed, "metadata.labels.environment"},
		}},
	} {
		t.Run(tc.change, func(t *testing.T) {
			base, head := layOutFixture(t, f, tc.change)
			r := compareFixture(t, f, base, head)
			all := compareFixture(t, f, base, head, review.WithAll())
			assert.Equal(t, len(all.Rendered)+len(all.NotRendered), len(r.Rendered)+len(r.NotRendered)+r.Skipped, "the producers counted do not add up")
			assert.Empty(t, r.NotRendered)
			assert.Contains(t, r.Rendered, rs)
			for _, w := range tc.want {
				i := slices.IndexFunc(r.Objects, func(c review.ObjectChange) bool { return c.ID.String() == w.id })
				if !assert.GreaterOrEqual(t, i, 0, "%s is not reported", w.id) {
					continue
				}
				c := r.Objects[i]
				assert.Equal(t, w.action, c.Action, w.id)
				assert.Equal(t, w.producer, c.Producer, w.id)
				if w.field != "" {
					assert.True(t, slices.ContainsFunc(c.Fields, func(fc review.FieldChange) bool { return fc.Path == w.field }), "%s: no change of %s in %+v", w.id, w.field, c.Fields)
				}
			}
		})
	}

	t.Run("provider-inputs", func(t *testing.T) {
		base, head := layOutFixture(t, f, "provider-inputs")
		r := compareFixture(t, f, base, head)
		all := compareFixture(t, f, base, head, review.WithAll())
		assert.Equal(t, len(all.Rendered)+len(all.NotRendered), len(r.Rendered)+len(r.NotRendered)+r.Skipped, "the producers counted do not add up")
		i := slices.IndexFunc(r.NotRendered, func(n review.NotRendered) bool { return n.Producer == rs })
		require.GreaterOrEqual(t, i, 0, "the ResourceSet is not said to be not rendered: %+v", r.NotRendered)
		assert.Equal(t, "head", r.NotRendered[i].Side)
		assert.Contains(t, r.NotRendered[i].Reason, "spec.inputsFrom")
		for _, c := range r.Objects {
			assert.NotEqual(t, review.Removed, c.Action, "%s is shown removed, though the head's ResourceSet may still make it", c.ID)
		}
	})
}
