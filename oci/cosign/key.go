package cosign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	sigcosign "github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/fluxpack/fluxpack/oci"
)

// Provider is the name of this package's signatures, as OCIRepository's
// spec.verify.provider says it.
const Provider = "cosign"

// EnvKeyPrefix marks a key reference that names an environment variable
// holding the PEM key instead of a file: env://COSIGN_PRIVATE_KEY, as in
// cosign's --key.
const EnvKeyPrefix = "env://"

// Signer signs with a key, in cosign's key-based format. It implements
// oci.Signer.
type Signer struct{ s signature.Signer }

var _ oci.Signer = (*Signer)(nil)

// NewSigner signs with s. Its public key must be one source-controller can
// load (ECDSA, RSA or Ed25519) and it must sign with SHA-256 for
// source-controller to accept the signature.
func NewSigner(s signature.Signer) (*Signer, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil signer", oci.ErrInvalidOption)
	}
	return &Signer{s}, nil
}

// NewKeySigner signs with the private key keyRef names, loaded by LoadKey:
// a file, env://VAR, or a KMS key reference. The key is read (a KMS key
// looked up) now; neither it nor the password appears in an error.
func NewKeySigner(keyRef string, password []byte) (*Signer, error) {
	sv, err := LoadKey(keyRef, password)
	if err != nil {
		return nil, err
	}
	return &Signer{sv}, nil
}

// Provider returns "cosign".
func (*Signer) Provider() string { return Provider }

// LoadKey loads the private key keyRef names: a file or env://VAR holding
// cosign's encrypted format (`cosign generate-key-pair`), decrypted with
// password, or an unencrypted PEM key (PKCS#8 as `openssl genpkey` writes
// it, or SEC 1 / PKCS#1): ECDSA, RSA or Ed25519, signing with SHA-256,
// which is what source-controller and `cosign verify --key` check with.
//
// Any other scheme://… reference is a KMS key and goes to sigstore's KMS
// registry (kms.Get with SHA-256), as cosign's --key does: a provider
// compiled into the program (KMSProviders), else sigstore's CLI plugin
// sigstore-kms-<scheme> found on $PATH, which receives the part after
// "://" (package github.com/sigstore/sigstore/pkg/signature/kms/cliplugin).
// The password is not used then, and the key never leaves the KMS: each
// signature is one call to it. The lookup has no deadline; the signing
// calls of Push carry Push's context.
func LoadKey(keyRef string, password []byte) (signature.SignerVerifier, error) {
	if isKMSRef(keyRef) {
		return loadKMSKey(keyRef)
	}
	raw, err := readKeyRef(keyRef)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("reading private key %s: no PEM block", keyRef)
	}
	var key crypto.PrivateKey
	switch block.Type {
	case sigcosign.CosignPrivateKeyPemType, sigcosign.SigstorePrivateKeyPemType:
		der, err := encrypted.Decrypt(block.Bytes, password)
		if err != nil {
			// The library's message says nothing of the password itself.
			return nil, fmt.Errorf("decrypting private key %s (is the password right?): %w", keyRef, err)
		}
		key, err = x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("parsing private key %s: %w", keyRef, err)
		}
	case "PUBLIC KEY":
		return nil, fmt.Errorf("reading private key %s: it holds a public key", keyRef)
	default:
		key, err = cryptoutils.UnmarshalPEMToPrivateKey(raw, cryptoutils.SkipPassword)
		if err != nil {
			return nil, fmt.Errorf("parsing private key %s (PEM type %q): %w", keyRef, block.Type, err)
		}
	}
	sv, err := signature.LoadSignerVerifier(key, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading private key %s: %w", keyRef, err)
	}
	return sv, nil
}

// LoadPublicKey loads the PEM public key keyRef names (a file or
// env://VAR), as source-controller loads each *.pub of its verification
// Secret: SHA-256. For a KMS key reference (see LoadKey) it asks the KMS
// for the key's public key once; signatures are then checked here, with
// that key, as they are with a file.
func LoadPublicKey(keyRef string) (signature.Verifier, error) {
	var pub crypto.PublicKey
	if isKMSRef(keyRef) {
		k, err := loadKMSKey(keyRef)
		if err != nil {
			return nil, err
		}
		pub = k.pub
	} else {
		raw, err := readKeyRef(keyRef)
		if err != nil {
			return nil, err
		}
		if pub, err = cryptoutils.UnmarshalPEMToPublicKey(raw); err != nil {
			return nil, fmt.Errorf("parsing public key %s: %w", keyRef, err)
		}
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading public key %s: %w", keyRef, err)
	}
	return v, nil
}

// readKeyRef reads a file or, for env://VAR, the variable.
func readKeyRef(keyRef string) ([]byte, error) {
	if keyRef == "" {
		return nil, fmt.Errorf("%w: empty key reference", oci.ErrInvalidOption)
	}
	if v, ok := strings.CutPrefix(keyRef, EnvKeyPrefix); ok {
		s, set := os.LookupEnv(v)
		if v == "" || !set || s == "" {
			return nil, fmt.Errorf("reading key %s: $%s is not set", keyRef, v)
		}
		return []byte(s), nil
	}
	raw, err := os.ReadFile(keyRef)
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	return raw, nil
}

// Sign signs the manifest at d with cosign's key-based signature format: a
// simple-signing payload naming the digest, signed, attached to the
// sha256-<hex>.sig tag of the repository beside the signatures already
// there. That is where source-controller's cosign verifier, and `cosign
// verify --key`, look when the artifact has no sigstore bundle.
func (s *Signer) Sign(ctx context.Context, d name.Digest, ro []remote.Option) error {
	body, err := payload.Cosign{Image: d}.MarshalJSON()
	if err != nil {
		return fmt.Errorf("signing %s: %w", oci.URL(d), err)
	}
	sig, err := s.s.SignMessage(bytes.NewReader(body), sigopts.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("signing %s: %w", oci.URL(d), err)
	}
	ociSig, err := static.NewSignature(body, base64.StdEncoding.EncodeToString(sig))
	if err != nil {
		return fmt.Errorf("signing %s: %w", oci.URL(d), err)
	}
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ro...)}
	se, err := ociremote.SignedEntity(d, copts...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", oci.URL(d), err)
	}
	se, err = mutate.AttachSignatureToEntity(se, ociSig)
	if err != nil {
		return fmt.Errorf("signing %s: %w", oci.URL(d), err)
	}
	if err := ociremote.WriteSignatures(d.Context(), se, copts...); err != nil {
		st, _ := ociremote.SignatureTag(d, copts...)
		return fmt.Errorf("writing the signature of %s to %s: %w", oci.URL(d), oci.URL(st), err)
	}
	return nil
}

// SignIfUnsigned signs d unless it already has a signature that verifies
// with s's public key, and reports whether it signed.
func (s *Signer) SignIfUnsigned(ctx context.Context, d name.Digest, ro []remote.Option) (bool, error) {
	pub, err := s.s.PublicKey()
	if err != nil {
		return false, fmt.Errorf("reading the signer's public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return false, fmt.Errorf("reading the signer's public key: %w", err)
	}
	res, err := (&Verifier{v: v}).Verify(ctx, d, ro)
	if err != nil {
		return false, err
	}
	if res.Status == oci.Verified {
		return false, nil
	}
	return true, s.Sign(ctx, d, ro)
}
