package fluxrepo

import (
	"sync"
	"sync/atomic"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/substitute"
)

// The bounds of what substitutedMemo keeps, so that a process that reads
// without end (a library's user, wake) does not grow without end: a number
// of objects, and the bytes of their keys. Variables for the tests.
var (
	substMemoMax      int64 = 1 << 14
	substMemoMaxBytes int64 = 32 << 20
)

// substMemo keeps what substituteOne made of a Kustomization object under a
// parent's postBuild, by the Substituter's Key and the object's JSON
// (yamlutil.JSON, what substitution reads of it): the
// reads of one review (the head's first and whole reads, the base's) meet
// the same objects under the same parents, and kustomize-controller's
// substitution, re-serialising each object through JSON and YAML, costs
// some milliseconds an object (a home-ops cluster's apps Kustomization
// substitutes 140 of them).
type substMemo struct {
	m        sync.Map // key → substituted
	n, bytes atomic.Int64
}

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
	if v, ok := m.m.Load(k); ok {
		return v.(substituted).copy()
	}
	r := substituteOne(s, o)
	if m.n.Load() < substMemoMax && m.bytes.Load()+int64(len(k)) <= substMemoMaxBytes {
		if _, loaded := m.m.LoadOrStore(k, r.copy()); !loaded {
			m.n.Add(1)
			m.bytes.Add(int64(len(k)))
		}
	}
	return r
}

// copy returns r with a Kustomization of its own.
func (r substituted) copy() substituted {
	if r.ks != nil {
		r.ks = r.ks.DeepCopy()
	}
	return r
}
