package lint

import (
	"fmt"
	"math/rand/v2"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/layering"
)

// The one-walk ancestors are the layers reachable by dependencies, as a
// walk from each layer finds them: on random graphs with unknown
// dependencies, duplicate names, self-loops and cycles.
func TestAncestors(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(90)
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("l%d", i)
			if i > 0 && r.IntN(20) == 0 {
				names[i] = names[r.IntN(i)] // a duplicate
			}
		}
		l := &linter{byName: map[string]*lintLayer{}}
		for i, name := range names {
			var deps []string
			for range r.IntN(4) {
				switch j := r.IntN(n + 1); {
				case j == n:
					deps = append(deps, "unknown")
				case j < i || r.IntN(10) == 0: // mostly acyclic
					deps = append(deps, names[j])
				}
			}
			ly := &lintLayer{Layer: &layering.Layer{Name: name, DependsOn: deps, Kustomization: &kustomizev1.Kustomization{}}, Input: &fluxbuild.Input{}, index: i}
			l.layers = append(l.layers, ly)
			if _, dup := l.byName[name]; !dup {
				l.byName[name] = ly
			}
		}
		l.index()

		for _, ly := range l.layers {
			want := map[string]bool{}
			stack := []string{}
			for d := range ly.direct {
				stack = append(stack, d)
			}
			for len(stack) > 0 {
				d := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if want[d] {
					continue
				}
				want[d] = true
				for dd := range l.byName[d].direct {
					stack = append(stack, dd)
				}
			}
			delete(want, ly.Name)
			got := map[string]bool{}
			for i := range ly.ancestors.all {
				got[l.layers[i].Name] = true
			}
			require.Equal(t, want, got, "seed %d: ancestors of layer %d (%s)", seed, ly.index, ly.Name)
			for name := range want {
				require.True(t, l.isAncestor(ly, name))
			}
		}
	}
}
