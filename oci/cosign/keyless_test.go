package cosign_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	sigcosign "github.com/sigstore/cosign/v3/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
	"github.com/fluxpack/fluxpack/oci/notation"
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
	co := &sigcosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{},
		NewBundleFormat:    true,
		TrustedMaterial:    ss.TrustedRoot,
		Identities:         []sigcosign.Identity{{Issuer: issuer, Subject: subject}},
	}
	bundles, _, err := sigcosign.GetBundles(t.Context(), ref, co.RegistryClientOpts)
	require.NoError(t, err, "reading the bundles of %s", url)
	require.NotEmpty(t, bundles, "no sigstore bundle on %s", url)
	_, _, err = sigcosign.VerifyImageAttestations(t.Context(), ref, co)
	return err
}

func TestPushKeyless(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	repo := reg.Host + "/platform"
	url := "oci://" + repo + ":v1"
	keyless := withKeyless(t, cosign.Keyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL})

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
	root := ss.TrustedRootFile(t)
	for _, tt := range []struct {
		name string
		url  string
		id   cosign.Identity
		want oci.VerifyStatus
	}{
		{"exact identity", url, cosign.Identity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}, oci.Verified},
		{"regexps", "oci://" + repo + ":latest", cosign.Identity{IssuerRegexp: `^https://oidc\.fluxpack\.test$`, SubjectRegexp: `^ci@`}, oci.Verified},
		{"another subject", url, cosign.Identity{Issuer: ss.Issuer, Subject: "someone@fluxpack.test"}, oci.BadSignature},
		{"another issuer", url, cosign.Identity{Issuer: "https://token.actions.githubusercontent.com", SubjectRegexp: ".*"}, oci.BadSignature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := oci.Verify(t.Context(), tt.url, withIdentity(t, root, tt.id))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Status, "Verify(%s, %+v): %s", tt.url, tt.id, got.Reason)
		})
	}
	// Another trusted root (another Sigstore's) refuses the signature.
	got, err := oci.Verify(t.Context(), url, withIdentity(t, testutil.NewSigstore(t).TrustedRootFile(t), cosign.Identity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}))
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
	_, err := oci.Push(t.Context(), dir, "oci://"+repo+":v1", withKeyless(t, cosign.Keyless{IDToken: token, FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}), oci.WithTags("latest"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "oci://"+repo+"@sha256:", "the error names the artifact")
	assert.NotContains(t, err.Error(), token)
	for _, tag := range []string{"v1", "latest"} {
		_, err = crane.Digest(repo + ":" + tag)
		require.Error(t, err, "tag %s after a failed keyless signing", tag)
	}

	// Rekor unreachable: no tag either.
	_, err = oci.Push(t.Context(), dir, "oci://"+repo+":v2", withKeyless(t, cosign.Keyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: "http://127.0.0.1:1"}))
	require.Error(t, err)
	_, err = crane.Digest(repo + ":v2")
	require.Error(t, err, "a tag after a failed keyless signing")
}

func TestCosignKeylessOptionErrors(t *testing.T) {
	token := "e30.e30.c2ln"
	for _, tt := range []struct {
		name string
		k    cosign.Keyless
		want string
	}{
		{"no token", cosign.Keyless{}, "Keyless.IDToken: no OIDC identity token"},
		{"not a JWT", cosign.Keyless{IDToken: "s3cret-not-a-jwt"}, "not a JWT"},
		{"bad Fulcio URL", cosign.Keyless{IDToken: token, FulcioURL: "ftp://fulcio"}, `Keyless.FulcioURL: invalid URL "ftp://fulcio"`},
		{"Rekor URL with credentials", cosign.Keyless{IDToken: token, RekorURL: "https://u:pw@rekor"}, "Keyless.RekorURL: invalid URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosign.NewKeylessSigner(tt.k)
			require.ErrorIs(t, err, oci.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "s3cret")
			assert.NotContains(t, err.Error(), ":pw@")
		})
	}
}

// TestOneSignerAtATime: Push takes one signer, of whatever kind.
func TestOneSignerAtATime(t *testing.T) {
	key, _ := testutil.PKCS8KeyPair(t, t.TempDir(), "k", false)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "n")
	keyless, err := cosign.NewKeylessSigner(cosign.Keyless{IDToken: "e30.e30.c2ln"})
	require.NoError(t, err)
	ns, err := notation.NewKeySigner(pki.Key, pki.Chain)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		opts []oci.PushOption
		want string
	}{
		{"key then keyless", []oci.PushOption{withKey(t, key, nil), oci.WithSigner(keyless)}, "one signer at a time (cosign and cosign)"},
		{"cosign then notation", []oci.PushOption{withKey(t, key, nil), oci.WithSigner(ns)}, "one signer at a time (cosign and notation)"},
		{"nil", []oci.PushOption{oci.WithSigner(nil)}, "nil signer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oci.Push(t.Context(), t.TempDir(), "oci://127.0.0.1:1/platform:v1", tt.opts...)
			require.ErrorIs(t, err, oci.ErrInvalidOption)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestVerifyKeylessUnsignedAndKeySigned(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	key, keyPub := testutil.PKCS8KeyPair(t, t.TempDir(), "k", false)
	root := ss.TrustedRootFile(t)
	id := withIdentity(t, root, cosign.Identity{Issuer: ss.Issuer, SubjectRegexp: ".*"})

	unsigned := "oci://" + reg.Host + "/platform:unsigned"
	_, err := oci.Push(t.Context(), dir, unsigned)
	require.NoError(t, err)
	got, err := oci.Verify(t.Context(), unsigned, id)
	require.NoError(t, err)
	assert.Equal(t, oci.Unsigned, got.Status, got.Reason)

	keyed := "oci://" + reg.Host + "/keyed:v1"
	_, err = oci.Push(t.Context(), dir, keyed, withKey(t, key, nil))
	require.NoError(t, err)
	got, err = oci.Verify(t.Context(), keyed, id)
	require.NoError(t, err)
	assert.Equal(t, oci.BadSignature, got.Status, "a key signature verified as keyless")

	for _, tt := range []struct {
		name string
		root string
		ids  []cosign.Identity
	}{
		{"no subject", root, []cosign.Identity{{Issuer: ss.Issuer}}},
		{"issuer twice", root, []cosign.Identity{{Issuer: ss.Issuer, IssuerRegexp: ".*", Subject: "s"}}},
		{"bad regexp", root, []cosign.Identity{{Issuer: ss.Issuer, SubjectRegexp: "("}}},
		{"trusted root alone", root, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cosign.NewKeylessVerifier(tt.root, tt.ids...)
			require.ErrorIs(t, err, oci.ErrInvalidOption)
		})
	}
	_, err = cosign.NewKeylessVerifier(filepath.Join(t.TempDir(), "none.json"), cosign.Identity{Issuer: ss.Issuer, Subject: "s"})
	require.ErrorIs(t, err, fs.ErrNotExist, "a missing trusted root")
	_, err = oci.Verify(t.Context(), unsigned, id, withPub(t, keyPub))
	require.ErrorIs(t, err, oci.ErrInvalidOption, "a key and an identity")
}

func TestPromoteKeyless(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	staging := "oci://" + reg.Host + "/platform/staging:main"
	_, err := oci.Push(t.Context(), dir, staging, withKeyless(t, cosign.Keyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}))
	require.NoError(t, err)
	root := ss.TrustedRootFile(t)

	_, err = oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/staging:prod", withIdentity(t, root, cosign.Identity{Issuer: ss.Issuer, Subject: "someone@fluxpack.test"}))
	require.ErrorIs(t, err, oci.ErrNotVerified, "Promote with another identity")
	_, err = crane.Digest(reg.Host + "/platform/staging:prod")
	require.Error(t, err, "the tag moved to an artifact of another identity")

	res, err := oci.Promote(t.Context(), staging, "oci://"+reg.Host+"/platform/prod:main", withIdentity(t, root, cosign.Identity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}))
	require.NoError(t, err, "Promote with the signer's identity")
	assert.Equal(t, res.Digest, tagDigest(t, reg.Host+"/platform/prod:main"))
	// Into another repository the bundle comes along.
	got, err := oci.Verify(t.Context(), "oci://"+reg.Host+"/platform/prod:main", withIdentity(t, root, cosign.Identity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}))
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

	res, err := oci.Push(t.Context(), dir, repo+":keyless", withKeyless(t, cosign.Keyless{IDToken: ss.Token("ci@fluxpack.test"), FulcioURL: ss.FulcioURL, RekorURL: ss.RekorURL}))
	require.NoError(t, err)
	require.True(t, res.Signed)
	got, err := oci.Verify(t.Context(), repo+":keyless", withIdentity(t, ss.TrustedRootFile(t), cosign.Identity{Issuer: ss.Issuer, Subject: "ci@fluxpack.test"}))
	require.NoError(t, err)
	assert.Equal(t, oci.Verified, got.Status, "keyless on the real registry: %s", got.Reason)

	testutil.WriteFiles(t, dir, map[string]string{"b.yaml": "kind: Namespace\n"})
	res, err = oci.Push(t.Context(), dir, repo+":kms", withKey(t, ref, nil))
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
