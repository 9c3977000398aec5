package testutil

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/cosign/v3/pkg/cosign"
)

// CosignKeyPair writes a key pair as `cosign generate-key-pair` does, in
// dir: cosign.key (cosign's encrypted format, with password) and
// cosign.pub. It returns their paths.
func CosignKeyPair(t testing.TB, dir, password string) (key, pub string) {
	t.Helper()
	kb, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return []byte(password), nil })
	if err != nil {
		t.Fatalf("generating a cosign key pair: %v", err)
	}
	key, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	writeKey(t, key, kb.PrivateBytes)
	writeKey(t, pub, kb.PublicBytes)
	return key, pub
}

// PKCS8KeyPair writes an unencrypted PKCS#8 private key as `openssl genpkey`
// does (ECDSA P-256, or Ed25519 with ed25519) and its PEM public key to
// dir/<name>.key and dir/<name>.pub, and returns their paths.
func PKCS8KeyPair(t testing.TB, dir, name string, ed bool) (key, pub string) {
	t.Helper()
	var priv, public any
	if ed {
		p, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv, public = k, p
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv, public = k, k.Public()
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(public)
	if err != nil {
		t.Fatal(err)
	}
	key, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	writeKey(t, key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	writeKey(t, pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	return key, pub
}

func writeKey(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
