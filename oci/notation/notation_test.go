package notation_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/notaryproject/notation-core-go/signature"
	notationgo "github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/truststore"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	orasremote "oras.land/oras-go/v2/registry/remote"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
	"github.com/fluxpack/fluxpack/oci/notation"
)

func notationVerify(t *testing.T, url string, pki testutil.NotationPKI) *oci.VerifyResult {
	t.Helper()
	res, err := oci.Verify(t.Context(), url, withPolicy(t, pki.TrustPolicy, pki.CA))
	require.NoError(t, err, "Verify(%s) with notation", url)
	return res
}

// sourceControllerVerify verifies ref (host/repo@digest) the way
// source-controller v1.9.6 does: oras-go's repository over plain HTTP,
// notation.Verify, three attempts. It proves that what fluxpack writes is
// found by oras-go's referrers lookup, not only by fluxpack's own.
func sourceControllerVerify(t *testing.T, ref string, pki testutil.NotationPKI) error {
	t.Helper()
	repo, err := orasremote.NewRepository(ref)
	require.NoError(t, err)
	repo.PlainHTTP = true
	policy, err := notation.LoadTrustPolicy(pki.TrustPolicy)
	require.NoError(t, err)
	ca, err := os.ReadFile(pki.CA)
	require.NoError(t, err)
	store := pemStore{ca}
	v, err := verifier.New(policy, store, nil)
	require.NoError(t, err)
	_, outcomes, err := notationgo.Verify(t.Context(), v, notationregistry.NewRepository(repo), notationgo.VerifyOptions{ArtifactReference: ref, MaxSignatureAttempts: 3})
	if err != nil {
		return err
	}
	if len(outcomes) == 0 {
		return errors.New("no outcome")
	}
	return nil
}

func TestNotationSignVerify(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []registry.Option
	}{
		{"tag schema", nil},
		{"referrers API", []registry.Option{registry.WithReferrersSupport(true)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := testutil.NewRegistry(t, tt.opts...)
			pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
			other := testutil.NewNotationPKI(t, t.TempDir(), "other")
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, platformFiles)
			repo := reg.Host + "/platform"
			url := "oci://" + repo + ":v1"

			res, err := oci.Push(t.Context(), dir, url, withKey(t, pki.Key, pki.Chain), oci.WithTags("latest"))
			require.NoError(t, err)
			assert.True(t, res.Pushed)
			assert.True(t, res.Signed, "Push with WithNotationKey: Result.Signed")
			assert.Equal(t, res.Digest, tagDigest(t, repo+":v1"))

			got := notationVerify(t, url, pki)
			assert.Equal(t, oci.Verified, got.Status, "reason: %s", got.Reason)
			assert.Equal(t, res.Digest, got.Digest)
			assert.Equal(t, oci.Verified, notationVerify(t, "oci://"+repo+":latest", pki).Status, "extra tag")
			assert.Equal(t, oci.Verified, notationVerify(t, "oci://"+repo+"@"+res.Digest, pki).Status, "by digest")
			require.NoError(t, sourceControllerVerify(t, res.Ref(), pki), "oras-go and notation, as source-controller")

			// The signature manifest, as notation-go writes it.
			sigs := referrers(t, repo, res.Digest)
			require.Len(t, sigs, 1)
			assert.Equal(t, oci.NotationArtifactType, sigs[0].ArtifactType)
			assert.Equal(t, notation.ArtifactType, oci.NotationArtifactType, "package oci copies what package notation writes")

			wrong := notationVerify(t, url, other)
			assert.Equal(t, oci.BadSignature, wrong.Status, "verify with another CA")
			assert.NotEmpty(t, wrong.Reason)
			require.Error(t, sourceControllerVerify(t, res.Ref(), other))

			// Unsigned.
			unsignedURL := "oci://" + repo + ":unsigned"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
			_, err = oci.Push(t.Context(), dir, unsignedURL)
			require.NoError(t, err)
			assert.Equal(t, oci.Unsigned, notationVerify(t, unsignedURL, pki).Status)

			// The signed tag moved to unsigned content.
			moved, err := oci.Push(t.Context(), dir, url)
			require.NoError(t, err)
			require.True(t, moved.Pushed)
			got = notationVerify(t, url, pki)
			assert.Equal(t, oci.Unsigned, got.Status, "a tag moved to unsigned content")
			assert.Equal(t, moved.Digest, got.Digest)
			require.Error(t, sourceControllerVerify(t, moved.Ref(), pki))
		})
	}
}

// referrers lists the notation signatures of digest in repo.
func referrers(t *testing.T, repo, digest string) []ocispec.Descriptor {
	t.Helper()
	r, err := orasremote.NewRepository(repo)
	require.NoError(t, err)
	r.PlainHTTP = true
	desc, err := r.Resolve(t.Context(), digest)
	require.NoError(t, err)
	var out []ocispec.Descriptor
	require.NoError(t, r.Referrers(t.Context(), desc, oci.NotationArtifactType, func(d []ocispec.Descriptor) error {
		out = append(out, d...)
		return nil
	}))
	return out
}

func TestNotationUnchangedAddsMissingSignature(t *testing.T) {
	reg := testutil.NewRegistry(t)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"
	sign := withKey(t, pki.Key, pki.Chain)

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

	// The signature gone (the tag schema's index deleted): added back, tag untouched.
	require.NoError(t, crane.Delete(repo+":"+strings.Replace(first.Digest, ":", "-", 1)))
	assert.Equal(t, oci.Unsigned, notationVerify(t, url, pki).Status)
	readded, err := oci.Push(t.Context(), dir, url, sign)
	require.NoError(t, err)
	assert.False(t, readded.Pushed)
	assert.True(t, readded.Signed, "unchanged push of a tag whose signature is gone: Signed")
	assert.Equal(t, first.Digest, tagDigest(t, repo+":v1"))
	assert.Equal(t, oci.Verified, notationVerify(t, url, pki).Status)

	// Signed by another CA: signed again with ours.
	other := testutil.NewNotationPKI(t, t.TempDir(), "other")
	res, err := oci.Push(t.Context(), dir, url, withKey(t, other.Key, other.Chain))
	require.NoError(t, err)
	assert.True(t, res.Signed, "a signature chaining to another root does not count")
	assert.Equal(t, oci.Verified, notationVerify(t, url, other).Status)
	assert.Equal(t, oci.Verified, notationVerify(t, url, pki).Status, "the first signature stays")
}

// failingNotationSigner fails to sign.
type failingNotationSigner struct{}

func (failingNotationSigner) Sign(context.Context, ocispec.Descriptor, notationgo.SignerSignOptions) ([]byte, *signature.SignerInfo, error) {
	return nil, nil, errors.New("hardware token unplugged")
}

func TestNotationSignFailureLeavesNoTag(t *testing.T) {
	reg := testutil.NewRegistry(t)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	other := testutil.NewNotationPKI(t, t.TempDir(), "other")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"

	// A key that does not match the certificate: refused before anything is sent.
	_, err := notation.NewKeySigner(other.Key, pki.Chain)
	require.Error(t, err)
	key, rerr := os.ReadFile(other.Key)
	require.NoError(t, rerr)
	assert.NotContains(t, err.Error(), strings.Split(string(key), "\n")[1], "the key in the error")

	chain := loadChain(t, pki)
	_, err = oci.Push(t.Context(), dir, url, withSigner(t, failingNotationSigner{}, chain), oci.WithTags("latest"))
	require.ErrorContains(t, err, "hardware token unplugged")
	assert.Contains(t, err.Error(), "oci://"+repo+"@sha256:", "the error names the artifact")
	_, err = crane.Digest(repo + ":v1")
	require.Error(t, err, "a tag after a failed signing")
	_, err = crane.Digest(repo + ":latest")
	require.Error(t, err, "an extra tag after a failed signing")

	first, err := oci.Push(t.Context(), dir, url, withKey(t, pki.Key, pki.Chain))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("kind: Namespace\n"), 0o644))
	_, err = oci.Push(t.Context(), dir, url, withSigner(t, failingNotationSigner{}, chain))
	require.Error(t, err)
	assert.Equal(t, first.Digest, tagDigest(t, repo+":v1"), "the tag moved to content whose signing failed")
}

func loadChain(t *testing.T, pki testutil.NotationPKI) []*x509.Certificate {
	t.Helper()
	_, chain, err := notation.LoadKey(pki.Key, pki.Chain)
	require.NoError(t, err)
	return chain
}

func TestNotationOptionErrors(t *testing.T) {
	reg := testutil.NewRegistry(t)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	garbage := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(garbage, []byte(`{"version": "1.0", "trustPolicies": [{"name": "x"}]}`), 0o600))
	certDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(certDir, "README"), []byte("no cert"), 0o600))
	url := "oci://" + reg.Host + "/platform:v1"

	for _, tt := range []struct {
		name          string
		policy        string
		certs         []string
		invalidOption bool
		want          string
	}{
		{"policy without certificates", pki.TrustPolicy, nil, true, "no certificate file"},
		{"invalid policy", garbage, []string{pki.CA}, false, "trust policy"},
		{"missing policy", filepath.Join(certDir, "none.json"), []string{pki.CA}, false, "no such file"},
		{"key as certificate", pki.TrustPolicy, []string{pki.Key}, false, "not a certificate"},
		{"empty directory", pki.TrustPolicy, []string{certDir}, false, "no *.crt or *.pem"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := notation.LoadVerifier(tt.policy, tt.certs...)
			require.Error(t, err, "LoadVerifier(%s)", tt.name)
			if tt.invalidOption {
				require.ErrorIs(t, err, oci.ErrInvalidOption)
			}
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := notation.NewVerifier(nil, nil)
	require.ErrorIs(t, err, oci.ErrInvalidOption, "NewVerifier without a policy")

	cv, err := cosign.NewKeyVerifier(pub)
	require.NoError(t, err)
	_, err = oci.Verify(t.Context(), url, oci.WithVerifier(cv), withPolicy(t, pki.TrustPolicy, pki.CA))
	require.ErrorIs(t, err, oci.ErrInvalidOption, "cosign and notation")
	assert.Contains(t, err.Error(), "one verifier at a time (cosign and notation)")

	_, err = notation.NewKeySigner(pki.Key, "")
	require.ErrorIs(t, err, oci.ErrInvalidOption, "a key without a certificate")

	// A trust store directory; a missing tag is an error, not unsigned.
	store := t.TempDir()
	ca, err := os.ReadFile(pki.CA)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(store, "ca.crt"), ca, 0o600))
	_, err = oci.Verify(t.Context(), "oci://"+reg.Host+"/nothing:v1", withPolicy(t, pki.TrustPolicy, store))
	require.Error(t, err)
	assert.NotErrorIs(t, err, oci.ErrInvalidOption)
	assert.Contains(t, err.Error(), "oci://"+reg.Host+"/nothing:v1")

	// A policy whose scope does not cover the repository: an error.
	scoped := filepath.Join(t.TempDir(), "scoped.json")
	require.NoError(t, os.WriteFile(scoped, []byte(strings.Replace(testutil.NotationTrustPolicy, `["*"]`, `["registry.example.com/elsewhere"]`, 1)), 0o600))
	_, err = oci.Push(t.Context(), dir, url, withKey(t, pki.Key, pki.Chain))
	require.NoError(t, err)
	_, err = oci.Verify(t.Context(), url, withPolicy(t, scoped, store))
	require.Error(t, err, "Verify with a policy for another repository")
}

func TestNotationRealRegistry(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/acme/signed:v1"

	res, err := oci.Push(t.Context(), dir, url, withKey(t, pki.Key, pki.Chain))
	require.NoError(t, err)
	require.True(t, res.Signed)
	got := notationVerify(t, url, pki)
	assert.Equal(t, oci.Verified, got.Status, "reason: %s", got.Reason)
	require.NoError(t, sourceControllerVerify(t, res.Ref(), pki), "oras-go and notation, as source-controller, against distribution")
	again, err := oci.Push(t.Context(), dir, url, withKey(t, pki.Key, pki.Chain))
	require.NoError(t, err)
	assert.False(t, again.Signed, "unchanged push of a signed tag, real registry")
}

// pemStore is source-controller's trust store: the first PEM block of each
// Secret key, in every named store.
type pemStore [][]byte

func (s pemStore) GetCertificates(context.Context, truststore.Type, string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for _, raw := range s {
		if b, _ := pem.Decode(raw); b != nil {
			raw = b.Bytes
		}
		c, err := x509.ParseCertificates(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, c...)
	}
	return out, nil
}

// Promote checks notation signatures when given a trust policy, and copies
// them into another repository, where source-controller looks.
func TestNotationPromote(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []registry.Option
	}{
		{"tag schema", nil},
		{"referrers API", []registry.Option{registry.WithReferrersSupport(true)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := testutil.NewRegistry(t, tt.opts...)
			pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
			other := testutil.NewNotationPKI(t, t.TempDir(), "other")
			check := []oci.PromoteOption{withPolicy(t, pki.TrustPolicy, pki.CA)}
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, platformFiles)
			staging := "oci://" + reg.Host + "/platform/staging:main"
			signed, err := oci.Push(t.Context(), dir, staging, withKey(t, pki.Key, pki.Chain))
			require.NoError(t, err)

			prod := "oci://" + reg.Host + "/platform/prod:main"
			res, err := oci.Promote(t.Context(), staging, prod, check...)
			require.NoError(t, err)
			assert.True(t, res.Pushed)
			assert.Equal(t, oci.Verified, notationVerify(t, prod, pki).Status, "the signature came along")
			require.NoError(t, sourceControllerVerify(t, reg.Host+"/platform/prod@"+signed.Digest, pki))

			_, err = oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/other:main",
				withPolicy(t, other.TrustPolicy, other.CA))
			require.ErrorIs(t, err, oci.ErrNotVerified, "promote checked against another CA")
			_, err = crane.Digest(reg.Host + "/platform/other:main")
			require.Error(t, err, "a refused promote wrote the tag")
		})
	}
}

// platformFiles is a small manifest tree.
var platformFiles = map[string]string{
	"crds/externalsecrets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: externalsecrets.external-secrets.io\n",
	"operator/deployment.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: external-secrets\n  namespace: external-secrets\n",
	"kustomization.yaml":        "resources: [crds, operator]\n",
}

func tagDigest(t *testing.T, ref string) string {
	t.Helper()
	d, err := crane.Digest(ref)
	require.NoError(t, err)
	return d
}

// withKey is the push option signing with the key and chain in the files.
func withKey(t *testing.T, keyFile, certFile string) oci.PushOption {
	t.Helper()
	s, err := notation.NewKeySigner(keyFile, certFile)
	require.NoError(t, err, "NewKeySigner(%s, %s)", keyFile, certFile)
	return oci.WithSigner(s)
}

// withSigner is the push option signing with s.
func withSigner(t *testing.T, s notationgo.Signer, chain []*x509.Certificate) oci.PushOption {
	t.Helper()
	ns, err := notation.NewSigner(s, chain)
	require.NoError(t, err)
	return oci.WithSigner(ns)
}

// withPolicy is the option verifying with the trust policy and certificates.
func withPolicy(t *testing.T, policy string, certs ...string) oci.KeyOption {
	t.Helper()
	v, err := notation.LoadVerifier(policy, certs...)
	require.NoError(t, err, "LoadVerifier(%s, %v)", policy, certs)
	return oci.WithVerifier(v)
}
