package substitute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/substitute"
)

// Substituter.JSON gives, for every case of the differential test, the JSON
// of the object as Flux's substitution leaves it (fluxcd/pkg/kustomize), or
// fails where Flux fails; and it leaves the object as it was.
func TestJSONAgainstFlux(t *testing.T) {
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			flux, fluxErr := fluxResources(t, tc)
			s := substituterFor(t, tc)
			ress, err := resources(tc.objs)
			require.NoError(t, err)
			var ourErr error
			var ours []string
			for _, res := range ress {
				before, err := res.MarshalJSON()
				require.NoError(t, err)
				got, _, err := s.JSON(res)
				after, _ := res.MarshalJSON()
				assert.JSONEq(t, string(before), string(after), "JSON changed the object")
				if err != nil {
					ourErr = err
					break
				}
				ours = append(ours, string(got))
			}
			if tc.wantErr || fluxErr != nil {
				assert.Error(t, fluxErr, "Flux on %q", tc.name)
				assert.Error(t, ourErr, "JSON on %q: want an error like Flux", tc.name)
				return
			}
			require.NoError(t, ourErr)
			require.Len(t, ours, len(flux))
			for i, res := range flux {
				want, err := res.MarshalJSON()
				require.NoError(t, err)
				assert.JSONEq(t, string(want), ours[i])
			}
		})
	}
}

// Key is the same for two Substituter values of the same variables, mode and
// strategy, and differs when one of them does.
func TestKey(t *testing.T) {
	key := func(postBuild string, lax bool) string {
		s := substituterFor(t, diffCase{ks: postBuild, lax: lax})
		k, err := s.Key()
		require.NoError(t, err)
		return k
	}
	base := key("substitute: {a: x, b: y}", false)
	assert.NotEmpty(t, base)
	assert.Equal(t, base, key("substitute: {b: y, a: x}", false))
	for _, other := range []string{
		key("substitute: {a: x, b: z}", false),
		key("substitute: {a: x}", false),
		key("substitute: {a: x, b: y}", true),
		key("substitute: {a: x, b: y}\nsubstituteStrategy: Always", false),
		key("substitute: {a: 'x\\x00b', b: y}", false),
	} {
		assert.NotEqual(t, base, other)
	}
	s := substituterFor(t, diffCase{ks: "substituteFrom: [{kind: ConfigMap, name: none}]"})
	_, err := s.Key()
	require.ErrorIs(t, err, substitute.ErrSourceNotFound)
}

// substituterFor is runOurs' Substituter for a case.
func substituterFor(t *testing.T, tc diffCase) *substitute.Substituter {
	t.Helper()
	var objs []runtime.Object
	for _, o := range sourceObjects(t, tc.sources) {
		objs = append(objs, o)
	}
	src, err := substitute.NewSources(objs...)
	require.NoError(t, err)
	s, err := substitute.NewSubstituter(kustomization(t, tc.ks), substitute.WithSources(src), substitute.WithStrict(!tc.lax))
	require.NoError(t, err)
	return s
}
