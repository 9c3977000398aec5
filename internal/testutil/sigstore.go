package testutil

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-openapi/runtime"
	ct "github.com/google/certificate-transparency-go"
	cttls "github.com/google/certificate-transparency-go/tls"
	ctx509 "github.com/google/certificate-transparency-go/x509"
	"github.com/google/certificate-transparency-go/x509util"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	_ "github.com/sigstore/rekor/pkg/types/dsse/v0.0.1"         // the entry kind keyless signing logs
	_ "github.com/sigstore/rekor/pkg/types/hashedrekord/v0.0.1" // and the one for message signatures
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Sigstore is a Fulcio and a Rekor served on loopback for keyless signing
// tests, and the trusted root that verifies what they issue, as
// source-controller's cosign verifier takes a custom trusted root. Rekor's
// signed entry timestamps and inclusion proofs come from sigstore-go's
// testing CA (ca.VirtualSigstore); the Fulcio here issues, for the key of
// each request whose proof of possession verifies, a certificate for the
// token's email with the token's issuer (OID 1.3.6.1.4.1.57264.1.1) and an
// embedded SCT from the test's CT log, as the public-good Fulcio does.
//
// The identity token is not checked beyond its form and Token: Fulcio
// trusts the test's OIDC issuer. Nothing here is the real Fulcio or Rekor.
type Sigstore struct {
	FulcioURL, RekorURL string
	// Issuer is the OIDC issuer the tokens of Token name.
	Issuer string
	// TrustedRoot verifies the certificates and log entries.
	TrustedRoot *root.TrustedRoot

	vs       *ca.VirtualSigstore
	rootCert *x509.Certificate
	inter    *x509.Certificate
	interKey *ecdsa.PrivateKey
	ctKey    *ecdsa.PrivateKey

	mu       sync.Mutex
	requests []string            // "fulcio", "rekor"
	tokens   map[string]struct{} // made by Token: the only ones Fulcio takes
}

// NewSigstore starts the Fulcio and the Rekor, stopped when the test ends.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatalf("starting the virtual sigstore: %v", err)
	}
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		t.Fatal(err)
	}
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	ctKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sigstore{Issuer: "https://oidc.fluxpack.test", vs: vs, rootCert: rootCert, inter: inter, interKey: interKey, ctKey: ctKey}

	ctLogID, err := keyID(ctKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// The virtual sigstore's log ID is the hex string's bytes, which does
	// not survive trusted_root.json: give it the raw key ID.
	rekorLogs := map[string]*root.TransparencyLog{}
	for id, l := range vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		l.ID = raw
		rekorLogs[id] = l
	}
	s.TrustedRoot, err = root.NewTrustedRoot(root.TrustedRootMediaType01,
		[]root.CertificateAuthority{&root.FulcioCertificateAuthority{
			Root: rootCert, Intermediates: []*x509.Certificate{inter},
			ValidityPeriodStart: now.Add(-time.Hour), ValidityPeriodEnd: now.Add(time.Hour), URI: "https://fulcio.fluxpack.test",
		}},
		map[string]*root.TransparencyLog{hex.EncodeToString(ctLogID): {
			BaseURL: "https://ctlog.fluxpack.test", ID: ctLogID, HashFunc: crypto.SHA256, PublicKey: ctKey.Public(),
			SignatureHashFunc: crypto.SHA256, ValidityPeriodStart: now.Add(-time.Hour), ValidityPeriodEnd: now.Add(time.Hour),
		}},
		nil,
		rekorLogs)
	if err != nil {
		t.Fatalf("making the trusted root: %v", err)
	}

	fulcio := httptest.NewServer(http.HandlerFunc(s.fulcio))
	t.Cleanup(fulcio.Close)
	rekor := httptest.NewServer(http.HandlerFunc(s.rekor))
	t.Cleanup(rekor.Close)
	s.FulcioURL, s.RekorURL = fulcio.URL, rekor.URL
	return s
}

// TrustedRootFile writes the trusted root as sigstore's trusted_root.json
// in a temporary directory and returns its path.
func (s *Sigstore) TrustedRootFile(t testing.TB) string {
	t.Helper()
	raw, err := s.TrustedRoot.MarshalJSON()
	if err != nil {
		t.Fatalf("marshalling the trusted root: %v", err)
	}
	p := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Token returns an identity token for email, issued by s.Issuer for the
// audience "sigstore". It is unsigned: this Fulcio accepts the tokens its
// Token made, and no other.
func (s *Sigstore) Token(email string) string {
	enc := base64.RawURLEncoding
	claims, _ := json.Marshal(map[string]any{
		"iss": s.Issuer, "sub": email, "email": email, "email_verified": true, "aud": "sigstore",
		"iat": time.Now().Unix(), "exp": time.Now().Add(10 * time.Minute).Unix(), "jti": rand.Text(),
	})
	token := enc.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + "." + enc.EncodeToString([]byte("unsigned"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[string]struct{}{}
	}
	s.tokens[token] = struct{}{}
	return token
}

func (s *Sigstore) issued(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens[token]
	return ok
}

// Requests returns the requests served, "fulcio" or "rekor", in order.
func (s *Sigstore) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Sigstore) served(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, what)
}

func keyID(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(der)
	return h[:], nil
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": fmt.Sprintf(format, args...)})
}

// fulcio serves POST /api/v2/signingCert.
func (s *Sigstore) fulcio(w http.ResponseWriter, r *http.Request) {
	s.served("fulcio")
	if r.Method != http.MethodPost || r.URL.Path != "/api/v2/signingCert" {
		httpError(w, http.StatusNotFound, "no %s %s", r.Method, r.URL.Path)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	parts := strings.Split(token, ".")
	if !ok || len(parts) != 3 || !s.issued(token) {
		httpError(w, http.StatusUnauthorized, "the bearer token is not one this test issued")
		return
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Issuer   string `json:"iss"`
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &claims)
	}
	if err != nil || claims.Email == "" || !claims.Verified {
		httpError(w, http.StatusUnauthorized, "the token has no verified email")
		return
	}
	var req struct {
		PublicKeyRequest struct {
			PublicKey struct {
				Content string `json:"content"`
			} `json:"publicKey"`
			ProofOfPossession []byte `json:"proofOfPossession"`
		} `json:"publicKeyRequest"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, "parsing the request: %v", err)
		return
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(req.PublicKeyRequest.PublicKey.Content))
	if err != nil {
		httpError(w, http.StatusBadRequest, "parsing the public key: %v", err)
		return
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err == nil {
		err = v.VerifySignature(bytes.NewReader(req.PublicKeyRequest.ProofOfPossession), strings.NewReader(claims.Email))
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, "checking the proof of possession: %v", err)
		return
	}
	leaf, err := s.issue(pub, claims.Email)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "issuing: %v", err)
		return
	}
	chain := []string{}
	for _, der := range [][]byte{leaf, s.inter.Raw, s.rootCert.Raw} {
		chain = append(chain, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK) // sigstore-go's Fulcio client wants 200
	_ = json.NewEncoder(w).Encode(map[string]any{"signedCertificateEmbeddedSct": map[string]any{"chain": map[string]any{"certificates": chain}}})
}

var (
	oidIssuer  = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidPoison  = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 3}
	oidSCTList = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 2}
)

// issue makes a precertificate, an SCT for it from the test's CT log, and
// the certificate with the SCT embedded, as Fulcio does with a CT log.
func (s *Sigstore) issue(pub crypto.PublicKey, email string) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now().Truncate(time.Second)
	tmpl := func(ext pkix.Extension) *x509.Certificate {
		return &x509.Certificate{
			SerialNumber: serial, EmailAddresses: []string{email},
			NotBefore: now.Add(-time.Minute), NotAfter: now.Add(10 * time.Minute),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
			ExtraExtensions: []pkix.Extension{{Id: oidIssuer, Value: []byte(s.Issuer)}, ext},
		}
	}
	precert, err := x509.CreateCertificate(rand.Reader, tmpl(pkix.Extension{Id: oidPoison, Critical: true, Value: asn1.NullBytes}), s.inter, pub, s.interKey)
	if err != nil {
		return nil, err
	}
	parsed, err := ctx509.ParseCertificate(precert)
	if err != nil {
		return nil, err
	}
	tbs, err := ctx509.RemoveCTPoison(parsed.RawTBSCertificate)
	if err != nil {
		return nil, err
	}
	logID, err := keyID(s.ctKey.Public())
	if err != nil {
		return nil, err
	}
	sct := ct.SignedCertificateTimestamp{SCTVersion: ct.V1, Timestamp: uint64(now.UnixMilli())}
	copy(sct.LogID.KeyID[:], logID)
	entry := ct.LogEntry{Leaf: ct.MerkleTreeLeaf{Version: ct.V1, LeafType: ct.TimestampedEntryLeafType, TimestampedEntry: &ct.TimestampedEntry{
		Timestamp: sct.Timestamp, EntryType: ct.PrecertLogEntryType,
		PrecertEntry: &ct.PreCert{IssuerKeyHash: sha256.Sum256(s.inter.RawSubjectPublicKeyInfo), TBSCertificate: tbs},
	}}}
	input, err := ct.SerializeSCTSignatureInput(sct, entry)
	if err != nil {
		return nil, err
	}
	signer, err := signature.LoadECDSASigner(s.ctKey, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	sig, err := signer.SignMessage(bytes.NewReader(input))
	if err != nil {
		return nil, err
	}
	sct.Signature = ct.DigitallySigned{Algorithm: cttls.SignatureAndHashAlgorithm{Hash: cttls.SHA256, Signature: cttls.ECDSA}, Signature: sig}
	list, err := x509util.MarshalSCTsIntoSCTList([]*ct.SignedCertificateTimestamp{&sct})
	if err != nil {
		return nil, err
	}
	listBytes, err := cttls.Marshal(*list)
	if err != nil {
		return nil, err
	}
	ext, err := asn1.Marshal(listBytes)
	if err != nil {
		return nil, err
	}
	return x509.CreateCertificate(rand.Reader, tmpl(pkix.Extension{Id: oidSCTList, Value: ext}), s.inter, pub, s.interKey)
}

// rekor serves POST /api/v1/log/entries: each entry is logged alone, at
// index 0 of a one-leaf tree, with a signed entry timestamp and an
// inclusion proof from the virtual sigstore's log key.
func (s *Sigstore) rekor(w http.ResponseWriter, r *http.Request) {
	s.served("rekor")
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/log/entries" {
		httpError(w, http.StatusNotFound, "no %s %s", r.Method, r.URL.Path)
		return
	}
	proposed, err := models.UnmarshalProposedEntry(r.Body, runtime.JSONConsumer())
	if err != nil {
		httpError(w, http.StatusBadRequest, "parsing the entry: %v", err)
		return
	}
	impl, err := types.CreateVersionedEntry(proposed)
	if err != nil {
		httpError(w, http.StatusBadRequest, "reading the entry: %v", err)
		return
	}
	body, err := types.CanonicalizeEntry(r.Context(), impl)
	if err != nil {
		httpError(w, http.StatusBadRequest, "canonicalizing the entry: %v", err)
		return
	}
	logID, err := s.vs.RekorLogID()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	integrated := time.Now().Unix()
	set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(body), IntegratedTime: integrated, LogIndex: 0, LogID: logID})
	if err != nil {
		httpError(w, http.StatusInternalServerError, "signing the entry timestamp: %v", err)
		return
	}
	proof, err := s.vs.GetInclusionProof(body)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "making the inclusion proof: %v", err)
		return
	}
	leaf := sha256.Sum256(append([]byte{0}, body...))
	uuid := hex.EncodeToString(leaf[:])
	index := int64(0)
	entry := models.LogEntry{uuid: models.LogEntryAnon{
		Body: base64.StdEncoding.EncodeToString(body), IntegratedTime: &integrated, LogID: &logID, LogIndex: &index,
		Verification: &models.LogEntryAnonVerification{SignedEntryTimestamp: set, InclusionProof: proof},
	}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", uuid)
	w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(entry)
}
