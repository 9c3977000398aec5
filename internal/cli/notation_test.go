package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestNotationSignAndVerify(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	other := testutil.NewNotationPKI(t, t.TempDir(), "other")
	store := t.TempDir()
	ca, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(pki.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyLine := strings.Split(string(key), "\n")[1]
	url := "oci://" + reg.Host + "/platform"
	policy := []string{"--trust-policy", pki.TrustPolicy}

	for _, tt := range []cmdCase{
		{"push signed", []string{"push", dir, url + ":v1", "--sign", "notation", "--key", pki.Key, "--cert", pki.Chain, "--source", "s", "--revision", "r"}, 0, reg.Host + "/platform@sha256:", "signed=true"},
		{"verify", append([]string{"verify", url + ":v1", "--cert", pki.CA}, policy...), 0, "verified: " + reg.Host + "/platform@sha256:", ""},
		{"verify with a trust store directory", append([]string{"verify", url + ":v1", "--cert", store}, policy...), 0, "verified: ", ""},
		{"verify another CA", append([]string{"verify", url + ":v1", "--cert", other.CA}, policy...), 1, "invalid: ", "has no signature the trust policy"},
		{"push unsigned", []string{"push", dir, url + ":v2", "--source", "s", "--revision", "r2", "--force"}, 0, reg.Host, ""},
		{"verify unsigned", append([]string{"verify", url + ":v2", "--cert", pki.CA}, policy...), 1, "unsigned: ", "is not signed"},
		{"push unchanged adds the signature", []string{"push", dir, url + ":v2", "--sign", "notation", "--key", pki.Key, "--cert", pki.Chain}, 0, reg.Host, "signature added"},
		{"verify after", append([]string{"verify", url + ":v2", "--cert", pki.CA}, policy...), 0, "verified: ", ""},
		{"verify missing tag", append([]string{"verify", url + ":nope", "--cert", pki.CA}, policy...), 2, "", "oci://" + reg.Host + "/platform:nope"},
		{"verify bad policy file", []string{"verify", url + ":v1", "--cert", pki.CA, "--trust-policy", pki.CA}, 2, "", "--trust-policy"},
		{"verify policy without cert", append([]string{"verify", url + ":v1"}, policy...), 2, "", "--trust-policy needs --cert"},
		{"verify cert without policy", []string{"verify", url + ":v1", "--cert", pki.CA}, 2, "", "--cert needs --trust-policy"},
		{"verify key and policy", append([]string{"verify", url + ":v1", "--key", pki.CA, "--cert", pki.CA}, policy...), 2, "", "exclude each other"},
		{"sign without cert", []string{"push", dir, url + ":v3", "--sign", "notation", "--key", pki.Key}, 2, "", "--sign notation needs --key and --cert"},
		{"cert without sign", []string{"push", dir, url + ":v3", "--cert", pki.Chain}, 2, "", "need --sign"},
		{"cert with cosign", []string{"push", dir, url + ":v3", "--sign", "cosign", "--key", pki.Key, "--cert", pki.Chain}, 2, "", "--cert is for --sign notation"},
		{"promote checked", append([]string{"promote", "oci://" + reg.Host + "/prod:main", "--from", url + ":v1", "--cert", pki.CA}, policy...), 0, reg.Host + "/prod:main@sha256:", "promoted"},
		{"verify promoted", append([]string{"verify", "oci://" + reg.Host + "/prod:main", "--cert", pki.CA}, policy...), 0, "verified: ", ""},
		{"promote refused", append([]string{"promote", "oci://" + reg.Host + "/prod:other", "--from", url + ":v1", "--cert", other.CA}, policy...), 1, "", "not verified"},
		{"promote policy without cert", append([]string{"promote", "oci://" + reg.Host + "/prod:other", "--from", url + ":v1"}, policy...), 2, "", "--trust-policy needs --cert"},
		{"key not matching the cert", []string{"push", dir, url + ":v3", "--sign", "notation", "--key", other.Key, "--cert", pki.Chain}, 2, "", "loading notation key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := tt.check(t)
			assert.NotContains(t, stdout+stderr, keyLine, "the key printed")
		})
	}
	_, stderr, code := run(t, append([]string{"verify", url + ":v3", "--cert", pki.CA}, policy...)...)
	assert.Equal(t, 2, code, "verify of the tag a failed signed push would have written: %s", stderr)
}

func TestRenderVerifyCert(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "examples", "external-secrets", "platform")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	stack := filepath.Join(dir, "stack.yaml")
	data, err := os.ReadFile(stack)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "tag: v1}", "tag: v1, verify: {provider: notation, secretRef: {name: notation-trust}}}", 1)
	if err := os.WriteFile(stack, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	secret := filepath.Join(t.TempDir(), "s.yaml")

	_, stderr, code := run(t, "render", "-f", stack, "-d", filepath.Join(t.TempDir(), "out"), "--secret-file", secret, "--verify-cert", pki.CA)
	assert.Equal(t, 0, code, stderr)
	got, err := os.ReadFile(secret)
	if err != nil {
		t.Fatal(err)
	}
	assert.Contains(t, string(got), "name: notation-trust")
	assert.Contains(t, string(got), "ca.crt: ")
	assert.Contains(t, string(got), "trustpolicy.json: ")

	_, stderr, code = run(t, "render", "-f", stack, "-d", filepath.Join(t.TempDir(), "out"), "--secret-file", secret, "--verify-trust-policy", pki.TrustPolicy)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--verify-trust-policy needs --verify-cert")
}
