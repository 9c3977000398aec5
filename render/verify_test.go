package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// verifyingStack is renderableStack with source.verify.
func verifyingStack(t *testing.T) string {
	t.Helper()
	dir := renderableStack(t)
	p := filepath.Join(dir, "stack.yaml")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	s := strings.Replace(string(data), "  source: {url: oci://registry.example.com/platform, tag: v1}",
		"  source: {url: oci://registry.example.com/platform, tag: v1, verify: {provider: cosign, secretRef: {name: cosign-pub}}}", 1)
	require.NotEqual(t, string(data), s, "the stack's source line")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	return dir
}

func TestRenderVerify(t *testing.T) {
	dir := verifyingStack(t)
	_, pub := testutil.CosignKeyPair(t, t.TempDir(), "pw")
	out := filepath.Join(t.TempDir(), "out")
	secretFile := filepath.Join(t.TempDir(), "vars.secret.yaml")

	r, err := render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), out, render.WithSecretFile(secretFile), render.WithVerifyKey(pub))
	require.NoError(t, err)
	require.NotNil(t, r.Plan.Source)
	assert.Equal(t, &sourcev1.OCIRepositoryVerification{Provider: "cosign", SecretRef: r.Plan.Source.Spec.Verify.SecretRef}, r.Plan.Source.Spec.Verify)
	src, err := os.ReadFile(filepath.Join(out, "source.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(src), "verify:\n    provider: cosign\n    secretRef:\n      name: cosign-pub\n", "source.yaml")

	// The key's Secret is in the secret file, beside the vars Secret, and
	// nowhere in the pushed directory.
	pem, err := os.ReadFile(pub)
	require.NoError(t, err)
	stream, err := os.ReadFile(secretFile)
	require.NoError(t, err)
	var found bool
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		var s corev1.Secret
		require.NoError(t, sigyaml.Unmarshal([]byte(doc), &s))
		if s.Name == "cosign-pub" {
			found = true
			assert.Equal(t, "flux-system", s.Namespace)
			assert.Equal(t, map[string][]byte{"cosign.pub": pem}, s.Data)
		}
	}
	assert.True(t, found, "Secret cosign-pub in %s:\n%s", secretFile, stream)
	for _, f := range r.Files {
		data, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "cosign-pub\n  namespace", "the key's Secret in the pushed %s", f)
		assert.NotContains(t, string(data), "PUBLIC KEY", "the key in the pushed %s", f)
	}

	// Problems.
	_, err = render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), filepath.Join(t.TempDir(), "o"), render.WithVerifyKey(pub))
	require.ErrorIs(t, err, layering.ErrInvalidOption, "WithVerifyKey without WithSecretFile")
	_, err = render.StackFile(t.Context(), filepath.Join(renderableStack(t), "stack.yaml"), filepath.Join(t.TempDir(), "o"),
		render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyKey(pub))
	require.ErrorIs(t, err, layering.ErrInvalidOption, "WithVerifyKey for a stack without source.verify")
	garbage := filepath.Join(t.TempDir(), "x.pub")
	require.NoError(t, os.WriteFile(garbage, []byte("nope"), 0o600))
	_, err = render.StackFile(t.Context(), filepath.Join(dir, "stack.yaml"), filepath.Join(t.TempDir(), "o"),
		render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyKey(garbage))
	require.ErrorIs(t, err, layering.ErrInvalidOption, "WithVerifyKey with no PEM public key")
	assert.Contains(t, err.Error(), "Secret/flux-system/cosign-pub")
}

func TestVerifyOption(t *testing.T) {
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1"), layering.Verify("cosign", "cosign-pub")).
		Layer("crds").Build()
	require.NoError(t, err)
	require.NotNil(t, plan.Source.Spec.Verify)
	assert.Equal(t, "cosign", plan.Source.Spec.Verify.Provider)
	assert.Equal(t, "cosign-pub", plan.Source.Spec.Verify.SecretRef.Name)
	_, pub := testutil.PKCS8KeyPair(t, t.TempDir(), "k", false)
	pem, err := os.ReadFile(pub)
	require.NoError(t, err)
	s, err := render.VerifySecret(plan, pem)
	require.NoError(t, err)
	assert.Equal(t, "cosign-pub", s.Name)
	assert.Equal(t, pem, s.Data[render.CosignPublicKeyKey])

	for _, tt := range []struct {
		name string
		opts []layering.StackOption
	}{
		{"bad provider", []layering.StackOption{layering.FromOCI("oci://r/p", "v1"), layering.Verify("gpg", "k")}},
		{"bad secret name", []layering.StackOption{layering.FromOCI("oci://r/p", "v1"), layering.Verify("cosign", "Bad_Name")}},
		{"no OCIRepository", []layering.StackOption{layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}), layering.Verify("cosign", "k")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := layering.New("platform", tt.opts...).Layer("crds").Build()
			require.ErrorIs(t, err, layering.ErrInvalidOption, "Build with %s", tt.name)
		})
	}
}

func TestRenderVerifyNotation(t *testing.T) {
	dir := renderableStack(t)
	p := filepath.Join(dir, "stack.yaml")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	s := strings.Replace(string(data), "  source: {url: oci://registry.example.com/platform, tag: v1}",
		"  source: {url: oci://registry.example.com/platform, tag: v1, verify: {provider: notation, secretRef: {name: notation-trust}}}", 1)
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	other := testutil.NewNotationPKI(t, t.TempDir(), "other")
	ca, err := os.ReadFile(pki.CA)
	require.NoError(t, err)
	otherCA, err := os.ReadFile(other.CA)
	require.NoError(t, err)

	secretOf := func(t *testing.T, file string) *corev1.Secret {
		t.Helper()
		stream, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range strings.Split(string(stream), "\n---\n") {
			var s corev1.Secret
			require.NoError(t, sigyaml.Unmarshal([]byte(doc), &s))
			if s.Name == "notation-trust" {
				return &s
			}
		}
		t.Fatalf("no Secret notation-trust in %s:\n%s", file, stream)
		return nil
	}

	// The default policy: strict, the source's repository, the Secret's store.
	out := filepath.Join(t.TempDir(), "out")
	secretFile := filepath.Join(t.TempDir(), "s.yaml")
	r, err := render.StackFile(t.Context(), p, out, render.WithSecretFile(secretFile), render.WithVerifyNotation("", pki.CA))
	require.NoError(t, err)
	assert.Equal(t, "notation", r.Plan.Source.Spec.Verify.Provider)
	got := secretOf(t, secretFile)
	assert.Equal(t, "flux-system", got.Namespace)
	assert.Equal(t, ca, got.Data[render.NotationCertificateKey])
	assert.JSONEq(t, `{"version": "1.0", "trustPolicies": [{"name": "notation-trust", "registryScopes": ["registry.example.com/platform"],
		"signatureVerification": {"level": "strict"}, "trustStores": ["ca:notation-trust"], "trustedIdentities": ["*"]}]}`,
		string(got.Data[render.NotationTrustPolicyKey]))
	for _, f := range r.Files {
		data, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "CERTIFICATE", "the certificate in the pushed %s", f)
	}

	// A given policy, and a bundle of two certificates: one a key.
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	require.NoError(t, os.WriteFile(bundle, append(append([]byte{}, ca...), otherCA...), 0o600))
	policy, err := os.ReadFile(pki.TrustPolicy)
	require.NoError(t, err)
	secretFile = filepath.Join(t.TempDir(), "s.yaml")
	_, err = render.StackFile(t.Context(), p, filepath.Join(t.TempDir(), "o"), render.WithSecretFile(secretFile), render.WithVerifyNotation(pki.TrustPolicy, bundle))
	require.NoError(t, err)
	got = secretOf(t, secretFile)
	assert.Equal(t, map[string][]byte{"trustpolicy.json": policy, "ca-0.crt": ca, "ca-1.crt": otherCA}, got.Data)

	// Problems.
	for _, tt := range []struct {
		name string
		opts []render.Option
	}{
		{"no secret file", []render.Option{render.WithVerifyNotation("", pki.CA)}},
		{"a key for a certificate", []render.Option{render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyNotation("", pki.Key)}},
		{"not a trust policy", []render.Option{render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyNotation(pki.CA, pki.CA)}},
		{"with a cosign key", []render.Option{render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyNotation("", pki.CA), render.WithVerifyKey(pki.CA)}},
		{"no certificate", []render.Option{render.WithVerifyNotation("")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render.StackFile(t.Context(), p, filepath.Join(t.TempDir(), "o"), tt.opts...)
			require.ErrorIs(t, err, layering.ErrInvalidOption, "StackFile with %s", tt.name)
		})
	}
	_, err = render.StackFile(t.Context(), filepath.Join(verifyingStack(t), "stack.yaml"), filepath.Join(t.TempDir(), "o"),
		render.WithSecretFile(filepath.Join(t.TempDir(), "s.yaml")), render.WithVerifyNotation("", pki.CA))
	require.ErrorIs(t, err, layering.ErrInvalidOption, "WithVerifyNotation for a stack verifying with cosign")
	assert.Contains(t, err.Error(), "provider: notation")
}

func TestRenderVerifyKeyless(t *testing.T) {
	dir := renderableStack(t)
	p := filepath.Join(dir, "stack.yaml")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	s := strings.Replace(string(data), "  source: {url: oci://registry.example.com/platform, tag: v1}",
		`  source: {url: oci://registry.example.com/platform, tag: v1, verify: {provider: cosign, matchOIDCIdentity: [{issuer: '^https://token\.actions\.githubusercontent\.com$', subject: '^https://github\.com/acme/platform/\.github/workflows/push\.yaml@refs/heads/main$'}]}}`, 1)
	require.NotEqual(t, string(data), s, "the stack's source line")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))

	out := filepath.Join(t.TempDir(), "out")
	_, err = render.StackFile(t.Context(), p, out)
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(out, "source.yaml"))
	require.NoError(t, err)
	testutil.Golden(t, "verify-keyless", src)

	// Identities source-controller would ignore or not compile.
	for _, tt := range []struct{ name, verify, want string }{
		{"with secretRef", `{provider: cosign, secretRef: {name: k}, matchOIDCIdentity: [{issuer: a, subject: b}]}`, "ignores it"},
		{"notation", `{provider: notation, secretRef: {name: k}, matchOIDCIdentity: [{issuer: a, subject: b}]}`, "for provider cosign"},
		{"bad regexp", `{provider: cosign, matchOIDCIdentity: [{issuer: '(', subject: b}]}`, "matchOIDCIdentity[0].issuer"},
		{"empty subject", `{provider: cosign, matchOIDCIdentity: [{issuer: a, subject: ''}]}`, "matchOIDCIdentity[0].subject is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := renderableStack(t)
			p := filepath.Join(dir, "stack.yaml")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			s := strings.Replace(string(data), "  source: {url: oci://registry.example.com/platform, tag: v1}",
				"  source: {url: oci://registry.example.com/platform, tag: v1, verify: "+tt.verify+"}", 1)
			require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
			_, err = render.StackFile(t.Context(), p, filepath.Join(t.TempDir(), "out"))
			require.ErrorIs(t, err, layering.ErrInvalidOption, "StackFile with source.verify %s", tt.verify)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestVerifyKeylessOption(t *testing.T) {
	id := sourcev1.OIDCIdentityMatch{Issuer: "^https://token.actions.githubusercontent.com$", Subject: "^https://github.com/acme/platform/"}
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1"), layering.VerifyKeyless(id)).
		Layer("crds").Build()
	require.NoError(t, err)
	assert.Equal(t, &sourcev1.OCIRepositoryVerification{Provider: "cosign", MatchOIDCIdentity: []sourcev1.OIDCIdentityMatch{id}}, plan.Source.Spec.Verify)
	_, err = render.VerifySecret(plan, []byte("x"))
	require.ErrorIs(t, err, layering.ErrInvalidOption, "a key Secret for a keyless stack")

	for _, tt := range []struct {
		name string
		opt  layering.StackOption
	}{
		{"no identity", layering.VerifyKeyless()},
		{"bad regexp", layering.VerifyKeyless(sourcev1.OIDCIdentityMatch{Issuer: "[", Subject: "s"})},
		{"empty issuer", layering.VerifyKeyless(sourcev1.OIDCIdentityMatch{Subject: "s"})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := layering.New("platform", layering.FromOCI("oci://r/p", "v1"), tt.opt).Layer("crds").Build()
			require.ErrorIs(t, err, layering.ErrInvalidOption, "Build with %s", tt.name)
		})
	}
}
