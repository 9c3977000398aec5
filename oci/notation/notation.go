package notation

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	_ "github.com/notaryproject/notation-core-go/signature/cose" // envelopes source-controller reads
	"github.com/notaryproject/notation-core-go/signature/jws"
	notationgo "github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/signer"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/trustpolicy"
	"github.com/notaryproject/notation-go/verifier/truststore"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/fluxpack/fluxpack/oci"
)

// Provider is the name of this package's signatures, as OCIRepository's
// spec.verify.provider says it.
const Provider = "notation"

// SignatureMediaType is the envelope this package's signatures use: JWS,
// notation's default. source-controller reads JWS and COSE.
const SignatureMediaType = jws.MediaTypeEnvelope

// ArtifactType is the artifact type of a notation signature manifest, the
// config media type the referrers API lists it under (oci.ArtifactType).
const ArtifactType = notationregistry.ArtifactTypeNotation

// notationMaxSignatureAttempts is how many signatures of an artifact
// source-controller v1.9.6 tries before it gives up.
const notationMaxSignatureAttempts = 3

// LoadKey loads a key and its certificate chain for notation-go's local
// signer: the PEM private key in keyFile (PKCS#8, PKCS#1 or SEC 1; RSA ≥
// 2048 bits or ECDSA P-256, P-384, P-521) and the PEM certificate chain in
// certFile, leaf first and up to the root the verifier trusts. The key
// never appears in an error.
func LoadKey(keyFile, certFile string) (notationgo.Signer, []*x509.Certificate, error) {
	if keyFile == "" || certFile == "" {
		return nil, nil, fmt.Errorf("%w: a notation key needs both a key file and a certificate file", oci.ErrInvalidOption)
	}
	chain, err := readCertificates(certFile)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(keyFile); err != nil {
		return nil, nil, fmt.Errorf("reading key: %w", err)
	}
	// notation-go reads the pair and checks that the key matches the leaf.
	// Its errors name the files, never the key's bytes.
	s, err := signer.NewGenericSignerFromFiles(keyFile, certFile)
	if err != nil {
		return nil, nil, fmt.Errorf("loading notation key %s with certificate %s: %w", keyFile, certFile, err)
	}
	return s, chain, nil
}

// LoadTrustPolicy reads and validates a notation trust policy
// (trustpolicy.json, notation's OCI trust policy document, version 1.0) as
// source-controller reads the trustpolicy.json of its Secret: JSON, and
// policies at the skip level lose their trust stores and identities.
func LoadTrustPolicy(file string) (*trustpolicy.Document, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading trust policy: %w", err)
	}
	var doc trustpolicy.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing trust policy %s: %w", file, err)
	}
	for i := range doc.TrustPolicies {
		if doc.TrustPolicies[i].SignatureVerification.VerificationLevel == trustpolicy.LevelSkip.Name {
			doc.TrustPolicies[i].TrustStores, doc.TrustPolicies[i].TrustedIdentities = []string{}, []string{}
		}
	}
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("trust policy %s: %w", file, err)
	}
	return &doc, nil
}

// ReadCertificates reads the certificates of PEM (or DER) files, and of
// the *.crt and *.pem files of directories.
func ReadCertificates(paths ...string) ([]*x509.Certificate, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no certificate file", oci.ErrInvalidOption)
	}
	var out []*x509.Certificate
	for _, p := range paths {
		certs, err := readCertificatePath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, certs...)
	}
	return out, nil
}

// readCertificatePath reads a certificate file, or the *.crt and *.pem
// files of a directory.
func readCertificatePath(p string) ([]*x509.Certificate, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading certificate: %w", err)
	}
	if !fi.IsDir() {
		return readCertificates(p)
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("reading certificates: %w", err)
	}
	var out []*x509.Certificate
	for _, e := range entries {
		if e.IsDir() || (!strings.HasSuffix(e.Name(), ".crt") && !strings.HasSuffix(e.Name(), ".pem")) {
			continue
		}
		certs, err := readCertificates(filepath.Join(p, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, certs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reading certificates: no *.crt or *.pem file in %s", p)
	}
	return out, nil
}

// readCertificates reads every certificate of a PEM file (or one DER
// certificate).
func readCertificates(file string) ([]*x509.Certificate, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading certificate: %w", err)
	}
	var out []*x509.Certificate
	rest := raw
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("reading certificate %s: PEM block %q is not a certificate", file, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing certificate %s: %w", file, err)
		}
		out = append(out, c)
	}
	if out == nil {
		c, err := x509.ParseCertificates(raw)
		if err != nil || len(c) == 0 {
			return nil, fmt.Errorf("reading certificate %s: no PEM certificate", file)
		}
		out = c
	}
	return out, nil
}

// certStore is a notation trust store holding the same certificates in
// every named store, as source-controller's.
type certStore []*x509.Certificate

func (s certStore) GetCertificates(context.Context, truststore.Type, string) ([]*x509.Certificate, error) {
	return s, nil
}

var _ truststore.X509TrustStore = certStore(nil)

// newNotationVerifier makes a verifier of policy with certs, as
// source-controller does.
func newNotationVerifier(policy *trustpolicy.Document, certs []*x509.Certificate) (notationgo.Verifier, error) {
	v, err := verifier.New(policy, certStore(certs), nil)
	if err != nil {
		return nil, fmt.Errorf("making the notation verifier: %w", err)
	}
	return v, nil
}

// signerVerifier is a verifier that accepts a signature made with a
// certificate chaining to the last certificate of chain: what an unchanged
// push looks for before it signs again.
func signerVerifier(chain []*x509.Certificate) (notationgo.Verifier, error) {
	policy := &trustpolicy.Document{
		Version: "1.0",
		TrustPolicies: []trustpolicy.TrustPolicy{{
			Name:                  "fluxpack-signer",
			RegistryScopes:        []string{"*"},
			SignatureVerification: trustpolicy.SignatureVerification{VerificationLevel: trustpolicy.LevelStrict.Name},
			TrustStores:           []string{"ca:fluxpack-signer"},
			TrustedIdentities:     []string{"*"},
		}},
	}
	return newNotationVerifier(policy, chain[len(chain)-1:])
}

// Signer signs with notation: a JWS envelope in an OCI image manifest
// whose subject is the artifact, found through the referrers API or, where
// the registry lacks it, the sha256-<hex> tag schema: where
// source-controller's notation verifier looks. It implements oci.Signer.
type Signer struct {
	signer notationgo.Signer
	chain  []*x509.Certificate
}

var _ oci.Signer = (*Signer)(nil)

// NewSigner signs with s (for a key in a KMS, a notation plugin's signer).
// chain is the certificate chain s signs with, leaf first; an unchanged
// push counts a signature as present when it verifies against the chain's
// last certificate.
func NewSigner(s notationgo.Signer, chain []*x509.Certificate) (*Signer, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil signer", oci.ErrInvalidOption)
	}
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: no certificate chain", oci.ErrInvalidOption)
	}
	return &Signer{s, chain}, nil
}

// NewKeySigner signs with the key and certificate chain LoadKey reads
// from keyFile and certFile, with notation-go's local signer. The files
// are read now.
func NewKeySigner(keyFile, certFile string) (*Signer, error) {
	s, chain, err := LoadKey(keyFile, certFile)
	if err != nil {
		return nil, err
	}
	return &Signer{s, chain}, nil
}

// Provider returns "notation".
func (*Signer) Provider() string { return Provider }

// Sign signs d and attaches the signature as a referrer.
func (s *Signer) Sign(ctx context.Context, d name.Digest, ro []remote.Option) error {
	repo := &notationRepo{repo: d.Context(), ro: ro}
	_, err := notationgo.Sign(ctx, s.signer, repo, notationgo.SignOptions{
		SignerSignOptions: notationgo.SignerSignOptions{
			SignatureMediaType: SignatureMediaType,
			SigningAgent:       oci.UserAgent,
		},
		ArtifactReference: d.DigestStr(),
	})
	if err != nil {
		return fmt.Errorf("signing %s with notation: %w", oci.URL(d), err)
	}
	return nil
}

// SignIfUnsigned signs d unless a signature chaining to the signer's root
// is there, and reports whether it signed.
func (s *Signer) SignIfUnsigned(ctx context.Context, d name.Digest, ro []remote.Option) (bool, error) {
	v, err := signerVerifier(s.chain)
	if err != nil {
		return false, err
	}
	res, err := verifyDigest(ctx, d, v, ro)
	if err != nil {
		return false, err
	}
	if res.Status == oci.Verified {
		return false, nil
	}
	return true, s.Sign(ctx, d, ro)
}

// Verifier checks notation signatures as source-controller does for
// spec.verify.provider notation: the signatures among the digest's
// referrers (the referrers API, else the sha256-<hex> tag), at most three
// tried, against a trust policy whose every store holds the certificates.
// It may answer oci.Skipped when the policy skips the artifact. It
// implements oci.Verifier.
type Verifier struct{ v notationgo.Verifier }

var _ oci.Verifier = (*Verifier)(nil)

// NewVerifier verifies with policy (see LoadTrustPolicy), every named
// store of which holds certs, as in source-controller.
func NewVerifier(policy *trustpolicy.Document, certs []*x509.Certificate) (*Verifier, error) {
	switch {
	case policy == nil:
		return nil, fmt.Errorf("%w: no trust policy", oci.ErrInvalidOption)
	case len(certs) == 0:
		return nil, fmt.Errorf("%w: a notation trust policy without certificates", oci.ErrInvalidOption)
	}
	v, err := newNotationVerifier(policy, certs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", oci.ErrInvalidOption, err)
	}
	return &Verifier{v}, nil
}

// LoadVerifier verifies with the trust policy in policyFile
// (LoadTrustPolicy) and the certificates of certPaths (ReadCertificates).
func LoadVerifier(policyFile string, certPaths ...string) (*Verifier, error) {
	policy, err := LoadTrustPolicy(policyFile)
	if err != nil {
		return nil, err
	}
	certs, err := ReadCertificates(certPaths...)
	if err != nil {
		return nil, err
	}
	return NewVerifier(policy, certs)
}

// Provider returns "notation".
func (*Verifier) Provider() string { return Provider }

// Verify checks d's notation signatures.
func (v *Verifier) Verify(ctx context.Context, d name.Digest, ro []remote.Option) (oci.Verification, error) {
	return verifyDigest(ctx, d, v.v, ro)
}

// verifyDigest verifies d's notation signatures with v as
// source-controller v1.9.6's notation verifier does: notationgo.Verify over
// the artifact's referrers, three signatures at most, the reference by
// digest. A registry failure is an error; no signature is Unsigned; none
// passing the policy is BadSignature, with notation's reason.
func verifyDigest(ctx context.Context, d name.Digest, v notationgo.Verifier, ro []remote.Option) (oci.Verification, error) {
	repo := &notationRepo{repo: d.Context(), ro: ro}
	_, outcomes, err := notationgo.Verify(ctx, v, repo, notationgo.VerifyOptions{
		ArtifactReference:    d.Name(),
		MaxSignatureAttempts: notationMaxSignatureAttempts,
	})
	var (
		noSig  notationgo.SignatureRetrievalFailedError
		failed notationgo.VerificationFailedError
	)
	switch {
	case repo.err != nil:
		return oci.Verification{}, fmt.Errorf("reading the notation signatures of %s: %w", oci.URL(d), repo.err)
	case err != nil && repo.listed == 0 && errors.As(err, &noSig):
		return oci.Verification{Status: oci.Unsigned, Reason: err.Error()}, nil
	case err != nil && errors.As(err, &failed):
		return oci.Verification{Status: oci.BadSignature, Reason: err.Error()}, nil
	case err != nil:
		// No applicable trust policy, or a policy notation cannot use.
		return oci.Verification{}, fmt.Errorf("verifying %s with notation: %w", oci.URL(d), err)
	case len(outcomes) == 0:
		return oci.Verification{Status: oci.BadSignature, Reason: "no verification outcome"}, nil
	}
	out := outcomes[0]
	if out.VerificationLevel == trustpolicy.LevelSkip {
		return oci.Verification{Status: oci.Skipped, Reason: "the trust policy skips verification of this artifact"}, nil
	}
	for _, r := range out.VerificationResults {
		// An authenticity failure the policy only logs: source-controller
		// does not mark such an artifact verified.
		if r.Error != nil && r.Type == trustpolicy.TypeAuthenticity {
			return oci.Verification{Status: oci.BadSignature, Reason: r.Error.Error()}, nil
		}
	}
	return oci.Verification{Status: oci.Verified, Signatures: 1}, nil
}

// notationRepo is notation-go's view of a repository, over
// go-containerregistry with the operation's transport, credentials and
// retries. It stores a signature the way notation-go's own repository
// does: an OCI image manifest with the artifact as subject, config media
// type ArtifactType and the envelope as its one layer.
type notationRepo struct {
	repo name.Repository
	ro   []remote.Option
	// err is the first registry failure, told apart from a failed
	// verification; listed counts the signatures listed.
	err    error
	listed int
}

var _ notationregistry.Repository = (*notationRepo)(nil)

// Limits of notation-go's own repository.
const (
	notationMaxBlob     = 32 << 20
	notationMaxManifest = 4 << 20
)

func (r *notationRepo) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

func (r *notationRepo) ref(reference string) name.Reference {
	if _, err := digest.Parse(reference); err == nil {
		return r.repo.Digest(reference)
	}
	return r.repo.Tag(reference)
}

func (r *notationRepo) Resolve(_ context.Context, reference string) (ocispec.Descriptor, error) {
	desc, err := remote.Head(r.ref(reference), r.ro...)
	if err != nil {
		return ocispec.Descriptor{}, r.fail(err)
	}
	return ocispec.Descriptor{MediaType: string(desc.MediaType), Digest: digest.Digest(desc.Digest.String()), Size: desc.Size}, nil
}

func (r *notationRepo) ListSignatures(_ context.Context, desc ocispec.Descriptor, fn func([]ocispec.Descriptor) error) error {
	idx, err := remote.Referrers(r.repo.Digest(desc.Digest.String()), append(slices.Clip(r.ro), remote.WithFilter("artifactType", ArtifactType))...)
	if err != nil {
		return r.fail(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return r.fail(err)
	}
	var sigs []ocispec.Descriptor
	for _, m := range im.Manifests {
		if m.ArtifactType != ArtifactType {
			continue
		}
		sigs = append(sigs, ocispec.Descriptor{MediaType: string(m.MediaType), Digest: digest.Digest(m.Digest.String()), Size: m.Size, ArtifactType: m.ArtifactType, Annotations: m.Annotations})
	}
	r.listed += len(sigs)
	return fn(sigs)
}

func (r *notationRepo) FetchSignatureBlob(_ context.Context, desc ocispec.Descriptor) ([]byte, ocispec.Descriptor, error) {
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, ocispec.Descriptor{}, fmt.Errorf("signature manifest %s: media type %q, want %q", desc.Digest, desc.MediaType, ocispec.MediaTypeImageManifest)
	}
	if desc.Size > notationMaxManifest {
		return nil, ocispec.Descriptor{}, fmt.Errorf("signature manifest %s: %d bytes, over %d", desc.Digest, desc.Size, notationMaxManifest)
	}
	got, err := remote.Get(r.repo.Digest(desc.Digest.String()), r.ro...)
	if err != nil {
		return nil, ocispec.Descriptor{}, r.fail(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(got.Manifest, &m); err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("parsing signature manifest %s: %w", desc.Digest, err)
	}
	if len(m.Layers) != 1 {
		return nil, ocispec.Descriptor{}, fmt.Errorf("signature manifest %s: %d layers, want one envelope", desc.Digest, len(m.Layers))
	}
	env := m.Layers[0]
	if env.Size > notationMaxBlob {
		return nil, ocispec.Descriptor{}, fmt.Errorf("signature envelope %s: %d bytes, over %d", env.Digest, env.Size, notationMaxBlob)
	}
	l, err := remote.Layer(r.repo.Digest(env.Digest.String()), r.ro...)
	if err != nil {
		return nil, ocispec.Descriptor{}, r.fail(err)
	}
	rc, err := l.Compressed() // checks the digest as it reads
	if err != nil {
		return nil, ocispec.Descriptor{}, r.fail(err)
	}
	defer rc.Close()
	blob, err := io.ReadAll(io.LimitReader(rc, env.Size+1))
	if err != nil {
		return nil, ocispec.Descriptor{}, r.fail(err)
	}
	if int64(len(blob)) != env.Size {
		return nil, ocispec.Descriptor{}, fmt.Errorf("signature envelope %s: %d bytes, want %d", env.Digest, len(blob), env.Size)
	}
	return blob, env, nil
}

// notationConfig is the empty JSON object a signature manifest's config holds.
var notationConfig = []byte("{}")

func (r *notationRepo) PushSignature(_ context.Context, mediaType string, blob []byte, subject ocispec.Descriptor, annotations map[string]string) (ocispec.Descriptor, ocispec.Descriptor, error) {
	cfg := static.NewLayer(notationConfig, types.MediaType(ArtifactType))
	env := static.NewLayer(blob, types.MediaType(mediaType))
	for _, l := range []v1.Layer{cfg, env} {
		if err := remote.WriteLayer(r.repo, l, r.ro...); err != nil {
			return ocispec.Descriptor{}, ocispec.Descriptor{}, r.fail(err)
		}
	}
	envDesc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(blob), Size: int64(len(blob))}
	m := ocispec.Manifest{
		MediaType:   ocispec.MediaTypeImageManifest,
		Config:      ocispec.Descriptor{MediaType: ArtifactType, Digest: digest.FromBytes(notationConfig), Size: int64(len(notationConfig))},
		Layers:      []ocispec.Descriptor{envDesc},
		Subject:     &subject,
		Annotations: annotations,
	}
	m.SchemaVersion = 2
	raw, err := json.Marshal(m)
	if err != nil {
		return ocispec.Descriptor{}, ocispec.Descriptor{}, err
	}
	md := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(raw), Size: int64(len(raw))}
	// go-containerregistry adds the manifest to the sha256-<hex> index
	// when the registry has no referrers API.
	if err := remote.Put(r.repo.Digest(md.Digest.String()), rawManifest{raw, types.OCIManifestSchema1}, r.ro...); err != nil {
		return ocispec.Descriptor{}, ocispec.Descriptor{}, r.fail(err)
	}
	return envDesc, md, nil
}

// rawManifest is a manifest go-containerregistry puts as it is.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return bytes.Clone(m.raw), nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }
