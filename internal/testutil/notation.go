package testutil

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
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
	ca, caKey := newCert(t, &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " test CA", Organization: []string{"fluxpack"}},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	leaf, leafKey := newCert(t, &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: name + " signer", Organization: []string{"fluxpack"}},
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}, ca, caKey)
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
	writeKey(t, p.CA, certPEM(ca.Raw))
	writeKey(t, p.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	writeKey(t, p.Chain, append(certPEM(leaf.Raw), certPEM(ca.Raw)...))
	if err := os.WriteFile(p.TrustPolicy, []byte(NotationTrustPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
