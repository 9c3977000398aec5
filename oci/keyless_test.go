package oci_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// verifyKeyless checks url's sigstore bundles the way source-controller's
// cosign verifier does for spec.verify.matchOIDCIdentity with a custom
// trusted root: bundles found through the referrers, verified by cosign
// against the trusted root (certificate chain, embedded SCT, Rekor entry)
// and the identity.
func verifyKeyless(t *testing.T, ss *testutil.Sigstore, url, issuer, subject string) error {
	t.Helper()
	ref, err := name.ParseReference(strings.TrimPrefix(url, "oci://"))
	require.NoError(t, err)
	co := &cosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{},
		NewBundleFormat:    true,
		TrustedMaterial:    ss.TrustedRoot,
		Identities:         []cosign.Identity{{Issuer: issuer, Subject: subject}},
	}
	bundles, _, err := cosign.GetBundles(t.Context(), ref, co.RegistryClientOpts)
	require.NoError(t, err, "reading the bundles of %s", url)
	require.NotEmpty(t, bundles, "no sigstore bundle on %s", url)
	_, _, err = cosign.VerifyImageAttestations(t.Context(), ref, co)
	return err
}

func TestPushKeyless(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"
	keyless := oci.WithCosignKeyless(oci.CosignKeyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL})

	res, err := oci.Push(t.Context(), dir, url, keyless, oci.WithTags("latest"))
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	assert.True(t, res.Signed)
	assert.Equal(t, []string{"fulcio", "rekor"}, ss.Requests())
	assert.Equal(t, res.Digest, tagDigest(t, repo+":v1"))

	require.NoError(t, verifyKeyless(t, ss, url, ss.Issuer, "ci@fluxpack.test"), "verifying the keyless signature")
	require.NoError(t, verifyKeyless(t, ss, "oci://"+repo+":latest", ss.Issuer, "ci@fluxpack.test"), "the extra tag")
	assert.Error(t, verifyKeyless(t, ss, url, ss.Issuer, "someone@fluxpack.test"), "another identity verified")
	assert.Error(t, verifyKeyless(t, ss, url, "https://token.actions.githubusercontent.com", "ci@fluxpack.test"), "another issuer verified")

	// The referrers tag that holds the bundle here (the in-memory registry
	// has no referrers API) is no tag of List's.
	tags, err := crane.ListTags(repo)
	require.NoError(t, err)
	assert.Contains(t, tags, "sha256-"+strings.TrimPrefix(res.Digest, "sha256:"), "the referrers tag schema's tag")
	listed, err := oci.List(t.Context(), "oci://"+repo)
	require.NoError(t, err)
	var names []string
	for _, l := range listed {
		names = append(names, l.Tag)
	}
	assert.ElementsMatch(t, []string{"v1", "latest"}, names, "List")

	// Verify, with the stand-ins' trusted root.
	root := oci.WithSigstoreTrustedRoot(ss.TrustedRootFile(t))
	for _, tt := range []struct {
		name string
		url  string
		id   oci.OIDCIdentity
		want oci.VerifyStatus
	}{
		{"exact identity", url, oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}, oci.Verified},
		{"regexps", "oci://" + repo + ":latest", oci.OIDCIdentity{IssuerRegexp: `^https://oidc\.fluxpack\.test$`, SubjectRegexp: `^ci@`}, oci.Verified},
		{"another subject", url, oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "someone@fluxpack.test"}, oci.BadSignature},
		{"another issuer", url, oci.OIDCIdentity{Issuer: "https://token.actions.githubusercontent.com", SubjectRegexp: ".*"}, oci.BadSignature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oci.Verify(t.Context(), tt.url, oci.WithCosignIdentity(tt.id), root)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Status, "Verify(%s, %+v): %s", tt.url, tt.id, got.Reason)
		})
	}
	// Another trusted root (another Sigstore's) refuses the signature.
	got, err := oci.Verify(t.Context(), url, oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}),
		oci.WithSigstoreTrustedRoot(testutil.NewSigstore(t).TrustedRootFile(t)))
	require.NoError(t, err)
	assert.Equal(t, oci.BadSignature, got.Status, "Verify against another trusted root")

	// Unchanged: the bundle is there, nothing signed again.
	again, err := oci.Push(t.Context(), dir, url, keyless)
	require.NoError(t, err)
	assert.False(t, again.Pushed)
	assert.False(t, again.Signed)
	assert.Len(t, ss.Requests(), 2, "an unchanged push of a keyless-signed tag asked Fulcio or Rekor")
}

func TestPushKeylessFailureLeavesNoTag(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"

	// A token Fulcio refuses (another issuer): no tag, the token never printed.
	other := testutil.NewSigstore(t)
	token := other.Token("ci@fluxpack.test")
	_, err := oci.Push(t.Context(), dir, "oci://"+repo+":v1", oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token, FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}), oci.WithTags("latest"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "oci://"+repo+"@sha256:", "the error names the artifact")
	assert.NotContains(t, err.Error(), token)
	for _, tag := range []string{"v1", "latest"} {
		_, err = crane.Digest(repo + ":" + tag)
		require.Error(t, err, "tag %s after a failed keyless signing", tag)
	}

	// Rekor unreachable: no tag either.
	_, err = oci.Push(t.Context(), dir, "oci://"+repo+":v2", oci.WithCosignKeyless(oci.CosignKeyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: "http://127.0.0.1:1"}))
	require.Error(t, err)
	_, err = crane.Digest(repo + ":v2")
	require.Error(t, err, "a tag after a failed keyless signing")
}

func TestCosignKeylessOptionErrors(t *testing.T) {
	key, _ := testutil.PKCS8KeyPair(t, t.TempDir(), "k", false)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "n")
	token := "e30.e30.c2ln"
	for _, tt := range []struct {
		name string
		opts []oci.PushOption
		want string
	}{
		{"no token", []oci.PushOption{oci.WithCosignKeyless(oci.CosignKeyless{})}, "no OIDC identity token"},
		{"not a JWT", []oci.PushOption{oci.WithCosignKeyless(oci.CosignKeyless{IDToken: "s3cret-not-a-jwt"})}, "not a JWT"},
		{"bad Fulcio URL", []oci.PushOption{oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token, FulcioURL: "ftp://fulcio"})}, `invalid Fulcio URL "ftp://fulcio"`},
		{"Rekor URL with credentials", []oci.PushOption{oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token, RekorURL: "https://u:pw@rekor"})}, "invalid Rekor URL"},
		{"key then keyless", []oci.PushOption{oci.WithCosignKey(key, nil), oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token})}, "exclude each other"},
		{"keyless then key", []oci.PushOption{oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token}), oci.WithCosignKey(key, nil)}, "exclude each other"},
		{"two cosign keys", []oci.PushOption{oci.WithCosignKey(key, nil), oci.WithCosignKey(key, nil)}, "one cosign signer at a time"},
		{"cosign then notation", []oci.PushOption{oci.WithCosignKey(key, nil), oci.WithNotationKey(pki.Key, pki.Chain)}, "cosign and notation signing exclude each other"},
		{"notation then keyless", []oci.PushOption{oci.WithNotationKey(pki.Key, pki.Chain), oci.WithCosignKeyless(oci.CosignKeyless{IDToken: token})}, "cosign and notation signing exclude each other"},
		{"two notation keys", []oci.PushOption{oci.WithNotationKey(pki.Key, pki.Chain), oci.WithNotationKey(pki.Key, pki.Chain)}, "one notation signer at a time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oci.Push(t.Context(), t.TempDir(), "oci://127.0.0.1:1/platform:v1", tt.opts...)
			require.ErrorIs(t, err, oci.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "s3cret")
			assert.NotContains(t, err.Error(), ":pw@")
		})
	}
}

func TestVerifyKeylessUnsignedAndKeySigned(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	key, _ := testutil.PKCS8KeyPair(t, t.TempDir(), "k", false)
	id := oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, SubjectRegexp: ".*"})
	root := oci.WithSigstoreTrustedRoot(ss.TrustedRootFile(t))

	unsigned := "oci://" + reg.Host + "/platform:unsigned"
	_, err := oci.Push(t.Context(), dir, unsigned)
	require.NoError(t, err)
	got, err := oci.Verify(t.Context(), unsigned, id, root)
	require.NoError(t, err)
	assert.Equal(t, oci.Unsigned, got.Status, got.Reason)

	keyed := "oci://" + reg.Host + "/keyed:v1"
	_, err = oci.Push(t.Context(), dir, keyed, oci.WithCosignKey(key, nil))
	require.NoError(t, err)
	got, err = oci.Verify(t.Context(), keyed, id, root)
	require.NoError(t, err)
	assert.Equal(t, oci.BadSignature, got.Status, "a key signature verified as keyless")

	for _, tt := range []struct {
		name string
		opts []oci.VerifyOption
	}{
		{"no subject", []oci.VerifyOption{oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer})}},
		{"issuer twice", []oci.VerifyOption{oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, IssuerRegexp: ".*", Subject: "s"})}},
		{"bad regexp", []oci.VerifyOption{oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, SubjectRegexp: "("})}},
		{"trusted root alone", []oci.VerifyOption{root}},
		{"missing trusted root", []oci.VerifyOption{id, oci.WithSigstoreTrustedRoot(filepath.Join(t.TempDir(), "none.json"))}},
		{"key and identity", []oci.VerifyOption{id, oci.WithCosignPublicKey(key)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oci.Verify(t.Context(), unsigned, tt.opts...)
			require.ErrorIs(t, err, oci.ErrInvalidOption)
		})
	}
}

func TestPromoteKeyless(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	staging := "oci://" + reg.Host + "/platform/staging:main"
	_, err := oci.Push(t.Context(), dir, staging, oci.WithCosignKeyless(oci.CosignKeyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}))
	require.NoError(t, err)
	root := oci.WithSigstoreTrustedRoot(ss.TrustedRootFile(t))

	_, err = oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/staging:prod", oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "someone@fluxpack.test"}), root)
	require.ErrorIs(t, err, oci.ErrNotVerified, "Promote with another identity")
	_, err = crane.Digest(reg.Host + "/platform/staging:prod")
	require.Error(t, err, "the tag moved to an artifact of another identity")

	res, err := oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/prod:main", oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}), root)
	require.NoError(t, err, "Promote with the signer's identity")
	assert.Equal(t, res.Digest, tagDigest(t, reg.Host+"/platform/prod:main"))
	// Into another repository the bundle comes along.
	got, err := oci.Verify(t.Context(), "oci://"+reg.Host+"/platform/prod:main", oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}), root)
	require.NoError(t, err)
	assert.Equal(t, oci.Verified, got.Status, "the promoted copy: %s", got.Reason)
}

// TestRealRegistryKeylessAndKMS signs keyless and with the KMS plugin on the
// real distribution registry, which has no referrers API: the bundle goes
// to the sha256-<hex> tag schema, which verification finds and List hides.
func TestRealRegistryKeylessAndKMS(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	ss := testutil.NewSigstore(t)
	ref, pub, _ := testutil.KMSPlugin(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := "oci://" + reg.Host + "/acme/platform"

	res, err := oci.Push(t.Context(), dir, repo+":keyless", oci.WithCosignKeyless(oci.CosignKeyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}))
	require.NoError(t, err)
	require.True(t, res.Signed)
	got, err := oci.Verify(t.Context(), repo+":keyless", oci.WithCosignIdentity(oci.OIDCIdentity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}), oci.WithSigstoreTrustedRoot(ss.TrustedRootFile(t)))
	require.NoError(t, err)
	assert.Equal(t, oci.Verified, got.Status, "keyless on the real registry: %s", got.Reason)

	testutil.WriteFiles(t, dir, map[string]string{"b.yaml": "kind: Namespace\n"})
	res, err = oci.Push(t.Context(), dir, repo+":kms", oci.WithCosignKey(ref, nil))
	require.NoError(t, err)
	require.True(t, res.Signed)
	assert.Equal(t, oci.Verified, verifyStatus(t, repo+":kms", pub).Status, "KMS on the real registry")

	listed, err := oci.List(t.Context(), repo)
	require.NoError(t, err)
	var names []string
	for _, l := range listed {
		names = append(names, l.Tag)
	}
	assert.ElementsMatch(t, []string{"keyless", "kms"}, names, "List")
}
