package cosign_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
)

// calls returns the methods the test KMS plugin was called for.
func calls(t *testing.T, log string) []string {
	t.Helper()
	raw, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(raw))
}

// TestPushSignedWithKMSPlugin signs through sigstore's KMS registry, which
// finds no compiled-in provider for testkms:// and runs the plugin
// sigstore-kms-testkms from $PATH; the signature must be an ordinary cosign
// signature that the plugin key's public key file verifies, as
// source-controller would with it.
func TestPushSignedWithKMSPlugin(t *testing.T) {
	ref, pub, log := testutil.KMSPlugin(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"

	res, err := oci.Push(t.Context(), dir, url, withKey(t, ref, nil))
	require.NoError(t, err, "Push with WithCosignKey(%s)", ref)
	assert.True(t, res.Pushed)
	assert.True(t, res.Signed)
	assert.Contains(t, calls(t, log), "signMessage", "the plugin was not asked to sign")
	_, err = crane.Digest(sigTag(repo, res.Digest))
	require.NoError(t, err, "the signature tag sha256-<hex>.sig")

	got := verifyStatus(t, url, pub)
	assert.Equal(t, oci.Verified, got.Status, "Verify with the KMS key's public key file: %s", got.Reason)
	got = verifyStatus(t, url, ref)
	assert.Equal(t, oci.Verified, got.Status, "Verify with WithCosignPublicKey(%s): %s", ref, got.Reason)

	_, otherPub := testutil.PKCS8KeyPair(t, t.TempDir(), "other", false)
	assert.Equal(t, oci.BadSignature, verifyStatus(t, url, otherPub).Status, "Verify with another key")

	// Unchanged: the plugin is asked for the public key, not to sign again.
	require.NoError(t, os.Remove(log))
	again, err := oci.Push(t.Context(), dir, url, withKey(t, ref, nil))
	require.NoError(t, err)
	assert.False(t, again.Pushed)
	assert.False(t, again.Signed, "unchanged push of a tag signed with the KMS key: Signed")
	assert.Contains(t, calls(t, log), "publicKey")
	assert.NotContains(t, calls(t, log), "signMessage")

	// A key the plugin cannot read: refused before anything is sent.
	missing := testutil.KMSPluginScheme + "://" + filepath.Join(t.TempDir(), "gone.key")
	_, err = cosign.NewKeySigner(missing, nil)
	require.Error(t, err, "a KMS key the plugin cannot read")
	assert.Contains(t, err.Error(), "reading the public key of KMS key "+missing)

	// The key gone between loading and signing: the signing fails after the
	// upload, naming the key, and no tag is written.
	key := strings.TrimPrefix(ref, testutil.KMSPluginScheme+"://")
	sv, err := cosign.LoadKey(ref, nil)
	require.NoError(t, err)
	require.NoError(t, os.Rename(key, key+".moved"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, "oci://"+repo+":v3", withSigner(t, sv))
	require.Error(t, err, "Push whose KMS signing fails")
	assert.Contains(t, err.Error(), "using KMS key "+ref)
	_, err = crane.Digest(repo + ":v3")
	require.Error(t, err, "a tag after a failed KMS signing")
}

func TestKMSKeyErrors(t *testing.T) {
	for _, tt := range []struct{ name, ref, want string }{
		{"scheme without plugin", "nokms://keys/1", "sigstore-kms-nokms"},
		{"cloud provider not compiled in", "awskms:///arn:aws:kms:us-east-1:1:key/1", "no provider for awskms://"},
		{"userinfo", "nokms://user:s3cret@vault.example.com/keys/1", "nokms://vault.example.com/keys/1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosign.LoadKey(tt.ref, nil)
			require.ErrorIs(t, err, cosign.ErrUnknownKMS, "LoadKey(%q)", tt.ref)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "env://VAR", "the error says what works")
			assert.NotContains(t, err.Error(), "s3cret")

			_, err = cosign.LoadPublicKey(tt.ref)
			require.ErrorIs(t, err, cosign.ErrUnknownKMS, "LoadPublicKey(%q)", tt.ref)

			_, err = cosign.NewKeySigner(tt.ref, nil)
			require.ErrorIs(t, err, cosign.ErrUnknownKMS, "NewKeySigner(%q)", tt.ref)
		})
	}
}
