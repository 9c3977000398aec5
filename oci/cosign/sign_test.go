package cosign_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
)

// sigTag is where cosign keeps the signatures of digest.
func sigTag(repo, digest string) string {
	return repo + ":" + strings.Replace(digest, ":", "-", 1) + ".sig"
}

func verifyStatus(t *testing.T, url, pub string) *oci.VerifyResult {
	t.Helper()
	res, err := oci.Verify(t.Context(), url, withPub(t, pub))
	require.NoError(t, err, "Verify(%s)", url)
	return res
}

func TestPushSignedVerifies(t *testing.T) {
	reg := testutil.NewRegistry(t)
	keys := t.TempDir()
	key, pub := testutil.CosignKeyPair(t, keys, "s3cret")
	_, otherPub := testutil.CosignKeyPair(t, t.TempDir(), "other")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"

	res, err := oci.Push(t.Context(), dir, url, withKey(t, key, []byte("s3cret")), oci.WithTags("latest"))
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	assert.True(t, res.Signed, "Push with WithCosignKey: Result.Signed")
	assert.Equal(t, res.Digest, tagDigest(t, repo+":v1"))
	_, err = crane.Digest(sigTag(repo, res.Digest))
	require.NoError(t, err, "the signature tag sha256-<hex>.sig")

	got := verifyStatus(t, url, pub)
	assert.Equal(t, oci.Verified, got.Status, "reason: %s", got.Reason)
	assert.Equal(t, 1, got.Signatures)
	assert.Equal(t, res.Digest, got.Digest)
	assert.Equal(t, "v1", got.Tag)
	assert.Equal(t, oci.Verified, verifyStatus(t, "oci://"+repo+":latest", pub).Status, "extra tag")
	assert.Equal(t, oci.Verified, verifyStatus(t, "oci://"+repo+"@"+res.Digest, pub).Status, "by digest")

	wrong := verifyStatus(t, url, otherPub)
	assert.Equal(t, oci.BadSignature, wrong.Status, "verify with another key")
	assert.NotEmpty(t, wrong.Reason)

	// An unsigned artifact.
	unsignedURL := "oci://" + repo + ":unsigned"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, unsignedURL)
	require.NoError(t, err)
	assert.Equal(t, oci.Unsigned, verifyStatus(t, unsignedURL, pub).Status)

	// The signed tag moved to unsigned content after signing.
	moved, err := oci.Push(t.Context(), dir, url)
	require.NoError(t, err)
	require.True(t, moved.Pushed)
	got = verifyStatus(t, url, pub)
	assert.Equal(t, oci.Unsigned, got.Status, "a tag moved to unsigned content")
	assert.Equal(t, moved.Digest, got.Digest)
}

func TestPushSignedUnchangedAddsMissingSignature(t *testing.T) {
	reg := testutil.NewRegistry(t)
	key, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"
	sign := withKey(t, key, []byte("pw"))

	first, err := oci.Push(t.Context(), dir, url, sign)
	require.NoError(t, err)

	// Unchanged and signed: nothing written.
	reg.Reset()
	again, err := oci.Push(t.Context(), dir, url, sign)
	require.NoError(t, err)
	assert.False(t, again.Pushed)
	assert.False(t, again.Signed, "unchanged push of a signed tag: Signed")
	for _, r := range reg.Requests() {
		assert.True(t, strings.HasPrefix(r, "GET ") || strings.HasPrefix(r, "HEAD "), "unchanged signed push sent %s", r)
	}

	// The signature deleted: the unchanged push adds it back, tag untouched.
	require.NoError(t, crane.Delete(sigTag(repo, first.Digest)))
	assert.Equal(t, oci.Unsigned, verifyStatus(t, url, pub).Status)
	readded, err := oci.Push(t.Context(), dir, url, sign)
	require.NoError(t, err)
	assert.False(t, readded.Pushed)
	assert.True(t, readded.Signed, "unchanged push of a tag whose signature is gone: Signed")
	assert.Equal(t, first.Digest, tagDigest(t, repo+":v1"))
	assert.Equal(t, oci.Verified, verifyStatus(t, url, pub).Status)

	// Content pushed unsigned first, then pushed unchanged with a key: signed.
	other := "oci://" + repo + ":v2"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, other)
	require.NoError(t, err)
	assert.Equal(t, oci.Unsigned, verifyStatus(t, other, pub).Status)
	res, err := oci.Push(t.Context(), dir, other, sign)
	require.NoError(t, err)
	assert.True(t, res.Signed)
	assert.Equal(t, oci.Verified, verifyStatus(t, other, pub).Status)
}

func TestPushSignedByAnotherKeyIsResigned(t *testing.T) {
	reg := testutil.NewRegistry(t)
	keyA, _ := testutil.CosignKeyPair(t, t.TempDir(), "a")
	keyB, pubB := testutil.CosignKeyPair(t, t.TempDir(), "b")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/platform:v1"

	_, err := oci.Push(t.Context(), dir, url, withKey(t, keyA, []byte("a")))
	require.NoError(t, err)
	res, err := oci.Push(t.Context(), dir, url, withKey(t, keyB, []byte("b")))
	require.NoError(t, err)
	assert.True(t, res.Signed, "a signature by another key does not count")
	got := verifyStatus(t, url, pubB)
	assert.Equal(t, oci.Verified, got.Status)
}

// failingSigner is a signer whose signing fails.
type failingSigner struct{ signature.Signer }

func (failingSigner) SignMessage(io.Reader, ...signature.SignOption) ([]byte, error) {
	return nil, errors.New("hardware token unplugged")
}

func TestPushSignFailureLeavesNoTag(t *testing.T) {
	reg := testutil.NewRegistry(t)
	key, _ := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"

	// A wrong password: refused before anything is sent, and never printed.
	_, err := cosign.NewKeySigner(key, []byte("not-the-password"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "not-the-password")
	assert.Contains(t, err.Error(), "decrypting private key")
	_, err = crane.Digest(repo + ":v1")
	require.Error(t, err, "a tag after a push with a bad key")

	// Signing fails after the upload: no tag, first push or not.
	sv, err := cosign.LoadKey(key, []byte("pw"))
	require.NoError(t, err)
	_, err = oci.Push(t.Context(), dir, url, withSigner(t, failingSigner{sv}), oci.WithTags("latest"))
	require.ErrorContains(t, err, "hardware token unplugged")
	assert.Contains(t, err.Error(), "oci://"+repo+"@sha256:", "the error names the artifact")
	_, err = crane.Digest(repo + ":v1")
	require.Error(t, err, "a tag after a failed signing")
	_, err = crane.Digest(repo + ":latest")
	require.Error(t, err, "an extra tag after a failed signing")

	first, err := oci.Push(t.Context(), dir, url, withSigner(t, sv))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, url, withSigner(t, failingSigner{sv}))
	require.Error(t, err)
	assert.Equal(t, first.Digest, tagDigest(t, repo+":v1"), "the tag moved to content whose signing failed")
}

func TestCosignKeyFormats(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	keys := t.TempDir()
	ecKey, ecPub := testutil.PKCS8KeyPair(t, keys, "ec", false)
	edKey, edPub := testutil.PKCS8KeyPair(t, keys, "ed", true)
	coKey, coPub := testutil.CosignKeyPair(t, keys, "")
	envPEM, err := os.ReadFile(ecKey)
	require.NoError(t, err)
	t.Setenv("FLUXPACK_TEST_SIGNING_KEY", string(envPEM))

	for _, tt := range []struct {
		name, key, pub string
	}{
		{"pkcs8 ecdsa", ecKey, ecPub},
		{"pkcs8 ed25519", edKey, edPub},
		{"cosign, empty password", coKey, coPub},
		{"env var", "env://FLUXPACK_TEST_SIGNING_KEY", ecPub},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := "oci://" + reg.Host + "/" + strings.ReplaceAll(strings.ReplaceAll(tt.name, " ", "-"), ",", "") + ":v1"
			res, err := oci.Push(t.Context(), dir, url, withKey(t, tt.key, nil))
			require.NoError(t, err, "Push with key %s", tt.key)
			assert.True(t, res.Signed)
			got := verifyStatus(t, url, tt.pub)
			assert.Equal(t, oci.Verified, got.Status, "Verify with %s: %s", tt.pub, got.Reason)
		})
	}
}

func TestCosignKeyErrors(t *testing.T) {
	keys := t.TempDir()
	_, pub := testutil.CosignKeyPair(t, keys, "pw")
	garbage := filepath.Join(keys, "garbage.key")
	require.NoError(t, os.WriteFile(garbage, []byte("not a key"), 0o600))
	t.Setenv("FLUXPACK_TEST_EMPTY", "")
	for _, tt := range []struct{ name, ref, want string }{
		{"missing file", filepath.Join(keys, "nope.key"), "no such file"},
		{"not PEM", garbage, "no PEM block"},
		{"public key", pub, "holds a public key"},
		{"unset variable", "env://FLUXPACK_TEST_EMPTY", "is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosign.LoadKey(tt.ref, nil)
			require.ErrorContains(t, err, tt.want, "LoadCosignKey(%q)", tt.ref)
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")

	_, err := oci.Verify(t.Context(), "oci://"+reg.Host+"/nothing:v1", withPub(t, pub))
	require.Error(t, err, "Verify of a missing tag")
	assert.Contains(t, err.Error(), "oci://"+reg.Host+"/nothing:v1")

	_, err = cosign.NewKeyVerifier(filepath.Join(t.TempDir(), "none.pub"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = cosign.NewKeyVerifier("")
	require.ErrorIs(t, err, oci.ErrInvalidOption, "an empty key reference")
	_, err = cosign.NewVerifier(nil)
	require.ErrorIs(t, err, oci.ErrInvalidOption, "a nil verifier")
	_, err = cosign.NewSigner(nil)
	require.ErrorIs(t, err, oci.ErrInvalidOption, "a nil signer")

	_, err = oci.Verify(t.Context(), "oci://"+reg.Host+"/nothing:v1")
	require.ErrorIs(t, err, oci.ErrInvalidOption, "Verify without a key")
	require.ErrorIs(t, err, oci.ErrNoVerifier, "Verify without a key")

	_, err = oci.Verify(t.Context(), "oci://127.0.0.1:1/nothing:v1", withPub(t, pub), oci.WithRetry(fastRetry))
	require.Error(t, err, "Verify against an unreachable registry")
}
