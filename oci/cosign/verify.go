package cosign

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	sigcosign "github.com/sigstore/cosign/v3/pkg/cosign"
	cosignoci "github.com/sigstore/cosign/v3/pkg/oci"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

// Verifier checks cosign signatures made with a key, as source-controller
// v1.9.6's cosign verifier does for a public key (internal/oci/cosign):
// offline, IgnoreTlog, a sigstore bundle found through the referrers API
// taking precedence over the sha256-<hex>.sig tag. It implements
// oci.Verifier.
type Verifier struct{ v signature.Verifier }

var _ oci.Verifier = (*Verifier)(nil)

// NewVerifier verifies with v.
func NewVerifier(v signature.Verifier) (*Verifier, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: nil verifier", oci.ErrInvalidOption)
	}
	return &Verifier{v}, nil
}

// NewKeyVerifier verifies with the public key keyRef names, loaded by
// LoadPublicKey: a PEM file, env://VAR or a KMS key reference.
func NewKeyVerifier(keyRef string) (*Verifier, error) {
	v, err := LoadPublicKey(keyRef)
	if err != nil {
		return nil, err
	}
	return &Verifier{v}, nil
}

// Provider returns "cosign".
func (*Verifier) Provider() string { return Provider }

// Verify checks d's signatures with the key. A failed verification is a
// status with cosign's reason; an error is a failure to ask (the
// registry).
func (v *Verifier) Verify(ctx context.Context, d name.Digest, ro []remote.Option) (oci.Verification, error) {
	return verifyDigest(ctx, d, &sigcosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(ro...)},
		SigVerifier:        v.v,
		Offline:            true,
		IgnoreTlog:         true,
	})
}

// Identity is a signer identity a keyless signature must carry: the OIDC
// issuer and the subject (an email, a CI workflow URL) of its Fulcio
// certificate, each given exactly or as a Go regular expression, as
// cosign's --certificate-oidc-issuer[-regexp] and
// --certificate-identity[-regexp], and source-controller's
// spec.verify.matchOIDCIdentity (regular expressions).
type Identity struct {
	Issuer, IssuerRegexp   string
	Subject, SubjectRegexp string
}

func (id Identity) check() error {
	if (id.Issuer == "") == (id.IssuerRegexp == "") {
		return errors.New("an identity needs the issuer, exactly or as a regular expression (one of Issuer and IssuerRegexp)")
	}
	if (id.Subject == "") == (id.SubjectRegexp == "") {
		return errors.New("an identity needs the subject, exactly or as a regular expression (one of Subject and SubjectRegexp)")
	}
	for _, re := range []string{id.IssuerRegexp, id.SubjectRegexp} {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("parsing the regular expression %q: %w", re, err)
		}
	}
	return nil
}

// KeylessVerifier checks keyless cosign signatures, as source-controller
// does for spec.verify.matchOIDCIdentity: a sigstore bundle or a legacy
// signature whose Fulcio certificate chains to the Sigstore trusted root,
// with a valid transparency log entry and an embedded SCT, naming one of
// the identities. It implements oci.Verifier.
type KeylessVerifier struct {
	identities  []sigcosign.Identity
	trustedRoot root.TrustedMaterial // nil: the public-good one, fetched when needed
}

var _ oci.Verifier = (*KeylessVerifier)(nil)

// NewKeylessVerifier accepts keyless signatures of any of ids (at least
// one) whose certificates chain to the Sigstore trusted root in the file
// trustedRoot (sigstore's trusted_root.json, as `cosign trusted-root
// create` writes it for a private Sigstore) or, when trustedRoot is "",
// to the public-good root, fetched through TUF as cosign and
// source-controller do when Verify first needs it (that needs the
// network).
func NewKeylessVerifier(trustedRoot string, ids ...Identity) (*KeylessVerifier, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: keyless verification needs at least one Identity", oci.ErrInvalidOption)
	}
	k := &KeylessVerifier{}
	for _, id := range ids {
		if err := id.check(); err != nil {
			return nil, fmt.Errorf("%w: Identity: %w", oci.ErrInvalidOption, err)
		}
		k.identities = append(k.identities, sigcosign.Identity{Issuer: id.Issuer, IssuerRegExp: id.IssuerRegexp, Subject: id.Subject, SubjectRegExp: id.SubjectRegexp})
	}
	if trustedRoot != "" {
		tr, err := root.NewTrustedRootFromPath(trustedRoot)
		if err != nil {
			return nil, fmt.Errorf("reading the trusted root %s: %w", trustedRoot, err)
		}
		k.trustedRoot = tr
	}
	return k, nil
}

// Provider returns "cosign".
func (*KeylessVerifier) Provider() string { return Provider }

// Verify checks d's keyless signatures.
func (k *KeylessVerifier) Verify(ctx context.Context, d name.Digest, ro []remote.Option) (oci.Verification, error) {
	tm := k.trustedRoot
	if tm == nil {
		var err error
		if tm, err = sigcosign.TrustedRoot(); err != nil {
			return oci.Verification{}, fmt.Errorf("fetching the public-good Sigstore trusted root (TUF): %w", err)
		}
	}
	return verifyDigest(ctx, d, &sigcosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(ro...)},
		Identities:         k.identities,
		TrustedMaterial:    tm,
	})
}

// verifyDigest verifies d's signatures with co, bundles first, else the
// legacy signature tag. A failed verification is a status with cosign's
// reason; err is for failures to ask (the registry).
func verifyDigest(ctx context.Context, d name.Digest, co *sigcosign.CheckOpts) (oci.Verification, error) {
	nameOpts := regutil.NameOptions(d)
	var (
		sigs []cosignoci.Signature
		err  error
	)
	bundles, _, berr := sigcosign.GetBundles(ctx, d, co.RegistryClientOpts, nameOpts...)
	if len(bundles) == 0 || berr != nil {
		sigs, _, err = sigcosign.VerifyImageSignatures(ctx, d, co)
	} else {
		co.NewBundleFormat = true
		sigs, _, err = sigcosign.VerifyImageAttestations(ctx, d, co, nameOpts...)
	}
	var (
		none     *sigcosign.ErrNoSignaturesFound
		noMatch  *sigcosign.ErrNoMatchingSignatures
		noAtt    *sigcosign.ErrNoMatchingAttestations
		failure  *sigcosign.VerificationFailure
		notFound *sigcosign.ErrImageTagNotFound
	)
	switch {
	case err == nil && len(sigs) > 0:
		return oci.Verification{Status: oci.Verified, Signatures: len(sigs)}, nil
	case err == nil:
		return oci.Verification{Status: oci.Unsigned, Reason: "no signature"}, nil
	case errors.As(err, &none):
		return oci.Verification{Status: oci.Unsigned, Reason: err.Error()}, nil
	case errors.As(err, &noMatch), errors.As(err, &noAtt), errors.As(err, &failure):
		return oci.Verification{Status: oci.BadSignature, Reason: err.Error()}, nil
	case errors.As(err, &notFound):
		return oci.Verification{}, fmt.Errorf("reading %s: %w", oci.URL(d), err)
	case regutil.IsNotFound(err):
		// The signature tag is gone: unsigned.
		return oci.Verification{Status: oci.Unsigned, Reason: err.Error()}, nil
	}
	return oci.Verification{}, fmt.Errorf("verifying the signatures of %s: %w", oci.URL(d), err)
}
