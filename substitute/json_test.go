package substitute_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/substitute"
)

// Substituter.JSON gives, for every case of the differential test, the JSON
// of the object Resource leaves, which is Flux's (TestDifferentialAgainstFlux),
// or fails where Resource fails; and it leaves the object as it was.
func TestJSONIsResources(t *testing.T) {
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			s := substituterFor(t, tc)
			viaResource, err := resources(tc.objs)
			require.NoError(t, err)
			viaJSON, err := resources(tc.objs)
			require.NoError(t, err)
			var resourceErr, jsonErr error
			for i, res := range viaJSON {
				before, err := res.MarshalJSON()
				require.NoError(t, err)
				got, substituted, err := s.JSON(res)
				after, _ := res.MarshalJSON()
				assert.JSONEq(t, string(before), string(after), "JSON changed the object")
				changed, rerr := s.Resource(viaResource[i])
				if rerr != nil || err != nil {
					resourceErr, jsonErr = rerr, err
					break
				}
				want, err := viaResource[i].MarshalJSON()
				require.NoError(t, err)
				assert.JSONEq(t, string(want), string(got))
				assert.Equal(t, changed, substituted)
			}
			if tc.wantErr {
				assert.Error(t, resourceErr)
			}
			if resourceErr != nil {
				assert.EqualError(t, jsonErr, resourceErr.Error())
			} else {
				assert.NoError(t, jsonErr)
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
