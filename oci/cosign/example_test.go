package cosign_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
)

// Sign a push with a cosign key and verify it with the public key, as
// source-controller would: here a fresh PEM key and go-containerregistry's
// in-process registry.
func Example() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	url := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/platform:v1"

	dir, _ := os.MkdirTemp("", "platform")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "namespace.yaml"), []byte("kind: Namespace\n"), 0o644)
	keyFile, pubFile := writeKeyPair(dir + ".keys")
	defer os.RemoveAll(dir + ".keys")

	signer, err := cosign.NewKeySigner(keyFile, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	res, err := oci.Push(ctx, dir, url, oci.WithSigner(signer))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pushed:", res.Pushed, "signed:", res.Signed)

	verifier, err := cosign.NewKeyVerifier(pubFile)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := oci.Verify(ctx, url, oci.WithVerifier(verifier))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Status, got.Signatures)
	// Output:
	// pushed: true signed: true
	// verified 1
}

// writeKeyPair writes an ECDSA P-256 key pair as PEM files in dir.
func writeKeyPair(dir string) (key, pub string) {
	_ = os.MkdirAll(dir, 0o700)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	key, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	_ = os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	_ = os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
	return key, pub
}
