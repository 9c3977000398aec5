package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// NotationPKI is a test CA and a code-signing leaf it issued, written as
// notation users keep them.
type NotationPKI struct {
	// CA is the CA certificate (PEM), what a trust store holds.
	CA string
	// Key is the leaf's private key (PKCS#8 PEM).
	Key string
	// Chain is the leaf certificate followed by the CA's (PEM).
	Chain string
	// TrustPolicy is a strict trust policy for every repository that
	// trusts the store "ca:fluxpack" and any identity.
	TrustPolicy string
}

// NotationTrustPolicy is the policy NotationPKI writes.
const NotationTrustPolicy = `{
  "version": "1.0",
  "trustPolicies": [{
    "name": "fluxpack-test",
    "registryScopes": ["*"],
    "signatureVerification": {"level": "strict"},
    "trustStores": ["ca:fluxpack"],
    "trustedIdentities": ["*"]
  }]
}
`

// NewNotationPKI makes a self-signed CA and a leaf certificate for code
// signing (ECDSA P-256, valid for a day), as notation requires them, and
// writes them to dir/<name>-{ca.crt,leaf.key,chain.crt} and
// dir/<name>-trustpolicy.json.
func NewNotationPKI(t testing.TB, dir, name string) NotationPKI {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " test CA", Organization: []string{"fluxpack"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: name + " signer", Organization: []string{"fluxpack"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, leafKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	p := NotationPKI{
		CA:          filepath.Join(dir, name+"-ca.crt"),
		Key:         filepath.Join(dir, name+"-leaf.key"),
		Chain:       filepath.Join(dir, name+"-chain.crt"),
		TrustPolicy: filepath.Join(dir, name+"-trustpolicy.json"),
	}
	writeKey(t, p.CA, certPEM(caDER))
	writeKey(t, p.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	writeKey(t, p.Chain, append(certPEM(leafDER), certPEM(caDER)...))
	if err := os.WriteFile(p.TrustPolicy, []byte(NotationTrustPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
