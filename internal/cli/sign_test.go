package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	ocicosign "github.com/fluxpack/fluxpack/oci/cosign"
)

func TestSignAndVerify(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	keys := t.TempDir()
	key, pub := testutil.CosignKeyPair(t, keys, "hunter2")
	_, otherPub := testutil.PKCS8KeyPair(t, keys, "other", false)
	url := "oci://" + reg.Host + "/platform"
	t.Setenv("COSIGN_PASSWORD", "hunter2")

	for _, tt := range []cmdCase{
		{"push signed", []string{"push", dir, url + ":v1", "--sign", "cosign", "--key", key, "--source", "s", "--revision", "r"}, 0, reg.Host + "/platform@sha256:", "signed=true"},
		{"verify", []string{"verify", url + ":v1", "--key", pub}, 0, "verified: " + reg.Host + "/platform@sha256:", ""},
		{"verify another key", []string{"verify", url + ":v1", "--key", otherPub}, 1, "invalid: ", "has no signature made with"},
		{"push unsigned", []string{"push", dir, url + ":v2", "--source", "s", "--revision", "r2", "--force"}, 0, reg.Host, ""},
		{"verify unsigned", []string{"verify", url + ":v2", "--key", pub}, 1, "unsigned: ", "is not signed"},
		{"push unchanged adds the signature", []string{"push", dir, url + ":v2", "--sign", "cosign", "--key", key}, 0, reg.Host, "signature added"},
		{"verify after", []string{"verify", url + ":v2", "--key", pub}, 0, "verified: ", ""},
		{"verify missing tag", []string{"verify", url + ":nope", "--key", pub}, 2, "", "oci://" + reg.Host + "/platform:nope"},
		{"verify bad key file", []string{"verify", url + ":v1", "--key", filepath.Join(keys, "none.pub")}, 2, "", "--key"},
		{"verify without key", []string{"verify", url + ":v1"}, 2, "", "--key is required"},
		{"sign without key", []string{"push", dir, url + ":v3", "--sign", "cosign"}, 2, "", "--sign cosign needs --key"},
		{"unknown signer", []string{"push", dir, url + ":v3", "--sign", "gpg", "--key", key}, 2, "", `invalid --sign "gpg"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := tt.check(t)
			assert.NotContains(t, stdout+stderr, "hunter2", "the password printed")
		})
	}

	// A wrong password: exit 2, no tag, the password never printed.
	t.Setenv("COSIGN_PASSWORD", "wrong-pass")
	stdout, stderr, code := run(t, "push", dir, url+":v9", "--sign", "cosign", "--key", key)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "decrypting private key")
	assert.NotContains(t, stdout+stderr, "wrong-pass")
	_, stderr, code = run(t, "verify", url+":v9", "--key", pub)
	assert.Equal(t, 2, code, "verify of the tag a failed signed push would have written: %s", stderr)
}

// TestSignWithKMSPlugin pushes with a KMS key reference, which sigstore's
// KMS registry hands to the test plugin sigstore-kms-testkms on $PATH, and
// verifies both with the KMS key and with its public key file.
func TestSignWithKMSPlugin(t *testing.T) {
	ref, pub, log := testutil.KMSPlugin(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	url := "oci://" + reg.Host + "/platform"
	_, otherPub := testutil.PKCS8KeyPair(t, t.TempDir(), "other", false)

	for _, tt := range []cmdCase{
		{"push signed with the KMS key", []string{"push", dir, url + ":v1", "--sign", "cosign", "--key", ref, "--source", "s", "--revision", "r"}, 0, reg.Host + "/platform@sha256:", "signed=true"},
		{"verify with the KMS key", []string{"verify", url + ":v1", "--key", ref}, 0, "verified: " + reg.Host + "/platform@sha256:", ""},
		{"verify with the public key file", []string{"verify", url + ":v1", "--key", pub}, 0, "verified: ", ""},
		{"verify with another key", []string{"verify", url + ":v1", "--key", otherPub}, 1, "invalid: ", "has no signature made with"},
		{"push with an unknown scheme", []string{"push", dir, url + ":v2", "--sign", "cosign", "--key", "nokms://keys/1"}, 2, "", "no sigstore KMS plugin sigstore-kms-nokms on $PATH"},
		{"verify with an unknown scheme", []string{"verify", url + ":v1", "--key", "nokms://keys/1"}, 2, "", "loading KMS key nokms://keys/1"},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.check(t) })
	}
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, strings.Fields(string(raw)), "signMessage", "the plugin was not asked to sign")
	_, stderr, code := run(t, "verify", url+":v2", "--key", pub)
	assert.Equal(t, 2, code, "verify of the tag a push with an unknown KMS scheme would have written: %s", stderr)
}

// TestKMSProvidersCompiledIn: the fluxpack command resolves the cloud KMS
// schemes with sigstore's providers, not with a plugin.
func TestKMSProvidersCompiledIn(t *testing.T) {
	assert.Subset(t, ocicosign.KMSProviders(), []string{"awskms://", "azurekms://", "gcpkms://", "hashivault://"})
}

// TestSignKeyless pushes with --keyless against the test's Fulcio and Rekor
// on loopback and checks the sigstore bundle as source-controller does with
// a trusted root and spec.verify.matchOIDCIdentity. None of it is the real
// Fulcio or Rekor.
func TestSignKeyless(t *testing.T) {
	ss := testutil.NewSigstore(t)
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	url := "oci://" + reg.Host + "/platform"
	token := ss.Token("ci@fluxpack.test")
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(ss.Token("file@fluxpack.test")+"\n"), 0o600))
	endpoints := []string{"--fulcio-url", ss.FulcioURL, "--rekor-url", ss.RekorURL}
	push := func(tag string, extra ...string) []string {
		return append([]string{"push", dir, url + ":" + tag, "--sign", "cosign", "--source", "s", "--revision", tag}, extra...)
	}

	for _, tt := range []struct {
		name     string
		env      string // $SIGSTORE_ID_TOKEN
		args     []string
		code     int
		inStderr string
		identity string // the signer's identity, when signed
	}{
		{"token flag", "", push("v1", append([]string{"--keyless", "--identity-token", token}, endpoints...)...), 0, "signed=true", "ci@fluxpack.test"},
		{"token file", "", push("v2", append([]string{"--keyless", "--identity-token", tokenFile}, endpoints...)...), 0, "signed=true", "file@fluxpack.test"},
		{"token variable", ss.Token("env@fluxpack.test"), push("v3", append([]string{"--keyless"}, endpoints...)...), 0, "signed=true", "env@fluxpack.test"},
		{"no token", "", push("v4", append([]string{"--keyless"}, endpoints...)...), 2, "--keyless needs an OIDC identity token", ""},
		{"token Fulcio refuses", "", push("v5", append([]string{"--keyless", "--identity-token", testutil.NewSigstore(t).Token("ci@fluxpack.test")}, endpoints...)...), 2, "Fulcio returned 401", ""},
		{"keyless and key", "", push("v6", "--keyless", "--key", tokenFile), 2, "--keyless and --key exclude each other", ""},
		{"endpoints without keyless", "", push("v7", "--fulcio-url", ss.FulcioURL, "--key", tokenFile), 2, "need --keyless", ""},
		{"keyless without cosign", "", []string{"push", dir, url + ":v8", "--keyless"}, 2, "are for --sign cosign", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SIGSTORE_ID_TOKEN", tt.env)
			stdout, stderr, code := run(t, tt.args...)
			assert.Equal(t, tt.code, code, "fluxpack %s: exit code\nstderr: %s", strings.Join(tt.args, " "), stderr)
			assert.Contains(t, stderr, tt.inStderr)
			assert.NotContains(t, stdout+stderr, token, "the token printed")
			tag := tt.args[2][strings.LastIndex(tt.args[2], ":")+1:]
			if tt.identity == "" {
				_, _, code := run(t, "verify", url+":"+tag, "--key", tokenFile)
				assert.Equal(t, 2, code, "a tag %s after a failed push", tag)
				return
			}
			assert.True(t, strings.HasPrefix(stdout, reg.Host+"/platform@sha256:"), "stdout %q", stdout)
			ref, err := name.ParseReference(reg.Host + "/platform:" + tag)
			require.NoError(t, err)
			co := &cosign.CheckOpts{NewBundleFormat: true, TrustedMaterial: ss.TrustedRoot,
				Identities: []cosign.Identity{{Issuer: ss.Issuer, Subject: tt.identity}}}
			_, _, err = cosign.VerifyImageAttestations(t.Context(), ref, co)
			require.NoError(t, err, "verifying %s as %s with cosign", ref, tt.identity)
		})
	}

	// fluxpack verify, keyless.
	trustedRoot := ss.TrustedRootFile(t)
	for _, tt := range []cmdCase{
		{"identity", []string{"--certificate-identity", "ci@fluxpack.test", "--certificate-oidc-issuer", ss.Issuer}, 0, "verified: ", ""},
		{"regexps", []string{"--certificate-identity-regexp", "@fluxpack[.]test$", "--certificate-oidc-issuer-regexp", "^https://oidc[.]fluxpack[.]test$"}, 0, "verified: ", ""},
		{"another identity", []string{"--certificate-identity", "file@fluxpack.test", "--certificate-oidc-issuer", ss.Issuer}, 1, "invalid: ", "has no keyless signature of the identity"},
		{"no issuer", []string{"--certificate-identity", "ci@fluxpack.test"}, 2, "", "issuer"},
		{"with a key", []string{"--certificate-identity", "ci@fluxpack.test", "--certificate-oidc-issuer", ss.Issuer, "--key", tokenFile}, 2, "", "exclude --key"},
	} {
		t.Run("verify "+tt.name, func(t *testing.T) {
			tt.args = append([]string{"verify", url + ":v1", "--trusted-root", trustedRoot}, tt.args...)
			tt.check(t)
		})
	}
	_, stderr, code := run(t, "verify", url+":v4", "--trusted-root", trustedRoot, "--certificate-identity", "ci@fluxpack.test", "--certificate-oidc-issuer", ss.Issuer)
	assert.Equal(t, 2, code, "verify of the tag a push without token would have written: %s", stderr)
	_, stderr, code = run(t, "push", dir, url+":v9", "--source", "s", "--revision", "v9", "--force")
	require.Equal(t, 0, code, stderr)
	stdout, stderr, code := run(t, "verify", url+":v9", "--trusted-root", trustedRoot, "--certificate-identity", "ci@fluxpack.test", "--certificate-oidc-issuer", ss.Issuer)
	assert.Equal(t, 1, code, "verify of an unsigned tag, keyless: %s", stderr)
	assert.True(t, strings.HasPrefix(stdout, "unsigned: "), stdout)
}
