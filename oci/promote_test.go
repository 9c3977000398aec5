package oci_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
)

// withCosignKey is the push option signing with the cosign key keyRef.
func withCosignKey(t *testing.T, keyRef string, password []byte) oci.PushOption {
	t.Helper()
	s, err := cosign.NewKeySigner(keyRef, password)
	require.NoError(t, err)
	return oci.WithSigner(s)
}

// withCosignPub is the option verifying with the cosign public key keyRef.
func withCosignPub(t *testing.T, keyRef string) oci.KeyOption {
	t.Helper()
	v, err := cosign.NewKeyVerifier(keyRef)
	require.NoError(t, err)
	return oci.WithVerifier(v)
}

func verifyStatus(t *testing.T, url, pub string) *oci.VerifyResult {
	t.Helper()
	res, err := oci.Verify(t.Context(), url, withCosignPub(t, pub))
	require.NoError(t, err, "Verify(%s)", url)
	return res
}

// Promote moves a tag to what another tag holds, in one repository or
// across repositories (with the signature), checks the signature when asked,
// and writes nothing when the tag is already there.
func TestPromote(t *testing.T) {
	reg := testutil.NewRegistry(t)
	key, pub := testutil.CosignKeyPair(t, t.TempDir(), "s3cret")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	staging := "oci://" + reg.Host + "/platform/staging:main"
	signed, err := oci.Push(t.Context(), dir, staging, withCosignKey(t, key, []byte("s3cret")), oci.WithTags("v2"))
	require.NoError(t, err)

	// Tag to tag in one repository.
	res, err := oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/staging:prod")
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	assert.Equal(t, signed.Digest, tagDigest(t, reg.Host+"/platform/staging:prod"))

	// Into another repository, checked, with the signature beside it.
	prod := "oci://" + reg.Host + "/platform/prod:main"
	res, err = oci.Promote(t.Context(), staging, prod, withCosignPub(t, pub))
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	assert.Equal(t, reg.Host+"/platform/prod", res.Repository)
	assert.Equal(t, signed.Digest, res.Digest)
	assert.Equal(t, oci.Verified, verifyStatus(t, prod, pub).Status, "the signature came along")
	pulled := t.TempDir()
	_, err = oci.Pull(t.Context(), prod, pulled)
	require.NoError(t, err)
	assert.Equal(t, testutil.ReadFiles(t, dir), testutil.ReadFiles(t, pulled))

	// Already there: nothing written.
	reg.Reset()
	res, err = oci.Promote(t.Context(), staging, prod)
	require.NoError(t, err)
	assert.False(t, res.Pushed)
	for _, r := range reg.Requests() {
		assert.False(t, strings.HasPrefix(r, "PUT ") || strings.HasPrefix(r, "POST "), "an idle promote wrote %s", r)
	}

	// An unsigned artifact is not promoted when a key is given.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, staging)
	require.NoError(t, err)
	_, err = oci.Promote(t.Context(), staging, prod, withCosignPub(t, pub))
	require.ErrorIs(t, err, oci.ErrNotVerified)
	assert.ErrorContains(t, err, "is unsigned")
	assert.Equal(t, signed.Digest, tagDigest(t, reg.Host+"/platform/prod:main"), "a refused promote moved the tag")

	_, err = oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/prod")
	require.ErrorIs(t, err, oci.ErrInvalidOption)
	assert.ErrorContains(t, err, "promote moves a tag")
	_, err = oci.Promote(t.Context(), "oci://"+reg.Host+"/platform/none:main", prod)
	require.Error(t, err)
	assert.ErrorContains(t, err, "reading oci://"+reg.Host+"/platform/none:main")
}

// A tag serving one cluster of a fleet (its artifact annotated with the
// cluster) does not move to an artifact rendered for another, unless
// WithOtherCluster says so; artifacts without the annotation move as
// before.
func TestPromoteRefusesAnotherClustersRender(t *testing.T) {
	reg := testutil.NewRegistry(t)
	push := func(cluster, tag string) {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"vars.yaml": "cluster: " + cluster + "\n"})
		var opts []oci.PushOption
		if cluster != "" {
			opts = append(opts, oci.WithAnnotations(map[string]string{oci.ClusterAnnotation: cluster}))
		}
		_, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:"+tag, opts...)
		require.NoError(t, err)
	}
	push("staging", "staging")
	push("prod", "prod")
	push("", "plain")
	prod := "oci://" + reg.Host + "/platform:prod"
	before := tagDigest(t, reg.Host+"/platform:prod")

	_, err := oci.Promote(t.Context(), "oci://"+reg.Host+"/platform:staging", prod)
	require.ErrorIs(t, err, oci.ErrOtherCluster)
	assert.Contains(t, err.Error(), `it is cluster "staging"'s render, and oci://`+reg.Host+`/platform:prod holds cluster "prod"'s`)
	assert.Equal(t, before, tagDigest(t, reg.Host+"/platform:prod"), "nothing moved")

	_, err = oci.Promote(t.Context(), "oci://"+reg.Host+"/platform:plain", prod)
	require.NoError(t, err, "an artifact of no fleet moves as before")
	_, err = oci.Promote(t.Context(), "oci://"+reg.Host+"/platform:staging", "oci://"+reg.Host+"/platform:new")
	require.NoError(t, err, "a new tag serves no cluster yet")
	push("prod", "prod")
	_, err = oci.Promote(t.Context(), "oci://"+reg.Host+"/platform:staging", prod, oci.WithOtherCluster())
	require.NoError(t, err)
}
