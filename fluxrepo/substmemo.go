package fluxrepo

import (
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/memo"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/substitute"
)

// substMemo keeps what substituteOne made of a Kustomization object under a
// parent's postBuild, by the Substituter's Key and the object's JSON
// (yamlutil.JSON, what substitution reads of it): the
// reads of one review (the head's first and whole reads, the base's) meet
// the same objects under the same parents, and kustomize-controller's
// substitution, re-serialising each object through JSON and YAML, costs
// some milliseconds an object (a home-ops cluster's apps Kustomization
// substitutes 140 of them). It is bounded as memo.Bounded is: a process
// that reads without end (a library's user, wake) does not grow without
// end.
type substMemo struct{ memo.Bounded[substituted] }

var substitutedMemo substMemo

// get is substituteOne(s, o), kept by key (s.Key(); "" keeps nothing). The
// Kustomization returned is the caller's own.
func (m *substMemo) get(s *substitute.Substituter, key string, o *fluxbuild.Object) substituted {
	if key == "" {
		return substituteOne(s, o)
	}
	data, err := yamlutil.JSON(o.Node)
	if err != nil {
		return substituteOne(s, o)
	}
	k := key + "\x00" + string(data)
	if v, ok := m.Load(k); ok {
		return v.copy()
	}
	r := substituteOne(s, o)
	m.Store(k, r.copy(), 0)
	return r
}

// copy returns r with a Kustomization of its own.
func (r substituted) copy() substituted {
	if r.ks != nil {
		r.ks = r.ks.DeepCopy()
	}
	return r
}
