package oci

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
	"github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/signer"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/trustpolicy"
	"github.com/notaryproject/notation-go/verifier/truststore"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// NotationSignatureMediaType is the envelope fluxpack's notation signatures
// use: JWS, notation's default. source-controller reads JWS and COSE.
const NotationSignatureMediaType = jws.MediaTypeEnvelope

// NotationArtifactType is the artifact type of a notation signature
// manifest, the config media type the referrers API lists it under.
const NotationArtifactType = notationregistry.ArtifactTypeNotation

// notationMaxSignatureAttempts is how many signatures of an artifact
// source-controller v1.9.6 tries before it gives up.
const notationMaxSignatureAttempts = 3

// WithNotationKey signs the pushed artifact with notation: the PEM private
// key in keyFile (PKCS#8, PKCS#1 or SEC 1; RSA ≥ 2048 bits or ECDSA P-256,
// P-384, P-521) and the PEM certificate chain in certFile, leaf first and
// up to the root the verifier trusts. The signature is a JWS envelope in
// an OCI image manifest whose subject is the artifact, found through the
// referrers API or, where the registry lacks it, the sha256-<hex> tag
// schema: where source-controller's notation verifier looks. The files are
// read when the option is applied; the key never appears in an error.
//
// WithNotationKey and WithCosignKey exclude each other.
func WithNotationKey(keyFile, certFile string) PushOption {
	return pushOpt{func(o *options) error {
		s, chain, err := LoadNotationKey(keyFile, certFile)
		if err != nil {
			return fmt.Errorf("%s: %w", "WithNotationKey", err)
		}
		return o.setSigner("WithNotationKey", notationSigner{s, chain})
	}}
}

// WithNotationSigner signs the pushed artifact with s, as WithNotationKey
// does (for a key in a KMS, through a notation plugin). certChain is the
// chain s signs with, leaf first; an unchanged push counts a signature as
// present when it verifies against the chain's last certificate.
func WithNotationSigner(s notation.Signer, certChain []*x509.Certificate) PushOption {
	return pushOpt{func(o *options) error {
		if s == nil {
			return fmt.Errorf("%s: nil signer", "WithNotationSigner")
		}
		if len(certChain) == 0 {
			return fmt.Errorf("%s: no certificate chain", "WithNotationSigner")
		}
		return o.setSigner("WithNotationSigner", notationSigner{s, certChain})
	}}
}

// LoadNotationKey loads the key and certificate chain WithNotationKey
// signs with, with notation-go's local signer.
func LoadNotationKey(keyFile, certFile string) (notation.Signer, []*x509.Certificate, error) {
	if keyFile == "" || certFile == "" {
		return nil, nil, errors.New("a notation key needs both a key file and a certificate file")
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

// WithNotationTrustPolicy verifies with notation and the trust policy in
// file (trustpolicy.json, notation's OCI trust policy document, version
// 1.0), as source-controller reads the trustpolicy.json of its Secret.
// Give the certificates with WithNotationCertificates.
func WithNotationTrustPolicy(file string) KeyOption {
	return verifyOpt{func(o *options) error {
		doc, err := LoadNotationTrustPolicy(file)
		if err != nil {
			return fmt.Errorf("%s: %w", "WithNotationTrustPolicy", err)
		}
		o.notationPolicy = doc
		return nil
	}}
}

// WithNotationCertificates adds the certificates the trust policy's stores
// hold: PEM (or DER) files, or directories whose *.crt and *.pem files are
// read. As in source-controller, every certificate is in every named
// store of the policy.
func WithNotationCertificates(paths ...string) KeyOption {
	return verifyOpt{func(o *options) error {
		if len(paths) == 0 {
			return fmt.Errorf("%s: no file", "WithNotationCertificates")
		}
		for _, p := range paths {
			certs, err := readCertificatePath(p)
			if err != nil {
				return fmt.Errorf("%s: %w", "WithNotationCertificates", err)
			}
			o.notationCerts = append(o.notationCerts, certs...)
		}
		return nil
	}}
}

// LoadNotationTrustPolicy reads and validates a notation trust policy as
// source-controller does: JSON, and policies at the skip level lose their
// trust stores and identities.
func LoadNotationTrustPolicy(file string) (*trustpolicy.Document, error) {
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
func newNotationVerifier(policy *trustpolicy.Document, certs []*x509.Certificate) (notation.Verifier, error) {
	v, err := verifier.New(policy, certStore(certs), nil)
	if err != nil {
		return nil, fmt.Errorf("making the notation verifier: %w", err)
	}
	return v, nil
}

// signerVerifier is a verifier that accepts a signature made with a
// certificate chaining to the last certificate of chain: what an unchanged
// push looks for before it signs again.
func signerVerifier(chain []*x509.Certificate) (notation.Verifier, error) {
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

// notationSign signs d with s and attaches the signature as a referrer.
func (s notationSigner) sign(ctx context.Context, d name.Digest, _ *options, ro []remote.Option) error {
	repo := &notationRepo{repo: d.Context(), ro: ro}
	_, err := notation.Sign(ctx, s.signer, repo, notation.SignOptions{
		SignerSignOptions: notation.SignerSignOptions{
			SignatureMediaType: NotationSignatureMediaType,
			SigningAgent:       UserAgent,
		},
		ArtifactReference: d.DigestStr(),
	})
	if err != nil {
		return fmt.Errorf("signing %s with notation: %w", URL(d), err)
	}
	return nil
}

// ensureNotationSigned signs d unless a signature chaining to the signer's
// root is there, and reports whether it signed.
func (s notationSigner) ensureSigned(ctx context.Context, d name.Digest, o *options, ro []remote.Option) (bool, error) {
	v, err := signerVerifier(s.chain)
	if err != nil {
		return false, err
	}
	status, _, _, err := notationVerifyDigest(ctx, d, v, ro)
	if err != nil {
		return false, err
	}
	if status == Verified {
		return false, nil
	}
	return true, s.sign(ctx, d, o, ro)
}

// notationVerifyDigest verifies d's notation signatures with v as
// source-controller v1.9.6's notation verifier does: notation.Verify over
// the artifact's referrers, three signatures at most, the reference by
// digest. A registry failure is an error; no signature is Unsigned; none
// passing the policy is BadSignature, with notation's reason.
func notationVerifyDigest(ctx context.Context, d name.Digest, v notation.Verifier, ro []remote.Option) (VerifyStatus, int, string, error) {
	repo := &notationRepo{repo: d.Context(), ro: ro}
	_, outcomes, err := notation.Verify(ctx, v, repo, notation.VerifyOptions{
		ArtifactReference:    d.Name(),
		MaxSignatureAttempts: notationMaxSignatureAttempts,
	})
	var (
		noSig  notation.SignatureRetrievalFailedError
		failed notation.VerificationFailedError
	)
	switch {
	case repo.err != nil:
		return "", 0, "", fmt.Errorf("reading the notation signatures of %s: %w", URL(d), repo.err)
	case err != nil && repo.listed == 0 && errors.As(err, &noSig):
		return Unsigned, 0, err.Error(), nil
	case err != nil && errors.As(err, &failed):
		return BadSignature, 0, err.Error(), nil
	case err != nil:
		// No applicable trust policy, or a policy notation cannot use.
		return "", 0, "", fmt.Errorf("verifying %s with notation: %w", URL(d), err)
	case len(outcomes) == 0:
		return BadSignature, 0, "no verification outcome", nil
	}
	out := outcomes[0]
	if out.VerificationLevel == trustpolicy.LevelSkip {
		return Skipped, 0, "the trust policy skips verification of this artifact", nil
	}
	for _, r := range out.VerificationResults {
		// An authenticity failure the policy only logs: source-controller
		// does not mark such an artifact verified.
		if r.Error != nil && r.Type == trustpolicy.TypeAuthenticity {
			return BadSignature, 0, r.Error.Error(), nil
		}
	}
	return Verified, 1, "", nil
}

// notationRepo is notation-go's view of a repository, over
// go-containerregistry with the operation's transport, credentials and
// retries. It stores a signature the way notation-go's own repository
// does: an OCI image manifest with the artifact as subject, config media
// type NotationArtifactType and the envelope as its one layer.
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
	idx, err := remote.Referrers(r.repo.Digest(desc.Digest.String()), append(slices.Clip(r.ro), remote.WithFilter("artifactType", NotationArtifactType))...)
	if err != nil {
		return r.fail(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return r.fail(err)
	}
	var sigs []ocispec.Descriptor
	for _, m := range im.Manifests {
		if m.ArtifactType != NotationArtifactType {
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
	cfg := static.NewLayer(notationConfig, types.MediaType(NotationArtifactType))
	env := static.NewLayer(blob, types.MediaType(mediaType))
	for _, l := range []v1.Layer{cfg, env} {
		if err := remote.WriteLayer(r.repo, l, r.ro...); err != nil {
			return ocispec.Descriptor{}, ocispec.Descriptor{}, r.fail(err)
		}
	}
	envDesc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(blob), Size: int64(len(blob))}
	m := ocispec.Manifest{
		MediaType:   ocispec.MediaTypeImageManifest,
		Config:      ocispec.Descriptor{MediaType: NotationArtifactType, Digest: digest.FromBytes(notationConfig), Size: int64(len(notationConfig))},
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

// notationSigner signs with notation, with the certificate chain an
// unchanged push checks an existing signature against.
type notationSigner struct {
	signer notation.Signer
	chain  []*x509.Certificate
}

func (notationSigner) tool() string { return "notation" }
