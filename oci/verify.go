package oci

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	cosignoci "github.com/sigstore/cosign/v3/pkg/oci"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/sigstore/pkg/signature"
)

// VerifyStatus says whether an artifact carries a signature made with a key.
type VerifyStatus string

// The answers of Verify.
const (
	// Verified: a signature of the artifact's digest verifies with the key.
	Verified VerifyStatus = "verified"
	// Unsigned: the artifact has no signature at all.
	Unsigned VerifyStatus = "unsigned"
	// BadSignature: the artifact has signatures, but none verifies with
	// the key (another key signed it, or the signature is corrupt).
	BadSignature VerifyStatus = "invalid"
	// Skipped: the notation trust policy that applies to the artifact
	// skips verification (level skip); source-controller then accepts the
	// artifact without marking it verified.
	Skipped VerifyStatus = "skipped"
)

// VerifyResult is the answer of Verify.
type VerifyResult struct {
	Status VerifyStatus `json:"status"`
	// Repository is host/repository.
	Repository string `json:"repository"`
	// Tag is the tag of the URL ("" for a digest URL).
	Tag string `json:"tag,omitempty"`
	// Digest is the manifest digest the URL points at, the one verified.
	Digest string `json:"digest"`
	// Signatures is how many signatures verify with the key.
	Signatures int `json:"signatures"`
	// Reason is cosign's or notation's account of a failed verification.
	Reason string `json:"reason,omitempty"`
}

// Ref returns host/repository@digest.
func (r *VerifyResult) Ref() string { return r.Repository + "@" + r.Digest }

// WithCosignPublicKey verifies with the PEM public key keyRef names: a file
// or env://VAR (LoadCosignPublicKey).
func WithCosignPublicKey(keyRef string) KeyOption {
	return verifyOpt{func(o *options) error {
		v, err := LoadCosignPublicKey(keyRef)
		if err != nil {
			return fmt.Errorf("%s: %w", "WithCosignPublicKey", err)
		}
		o.verifier = v
		return nil
	}}
}

// WithCosignVerifier verifies with v, as WithCosignPublicKey does.
func WithCosignVerifier(v signature.Verifier) KeyOption {
	return verifyOpt{func(o *options) error {
		if v == nil {
			return fmt.Errorf("%s: nil verifier", "WithCosignVerifier")
		}
		o.verifier = v
		return nil
	}}
}

// Verify checks the cosign signatures of the artifact url names (by tag or
// digest) with the key WithCosignPublicKey gives, the way source-controller
// checks an OCIRepository with spec.verify.provider cosign and a public key:
// offline, without transparency log, a sigstore bundle found through the
// referrers API taking precedence over the sha256-<hex>.sig tag. The tag is
// resolved once and its digest verified.
//
// With WithNotationTrustPolicy and WithNotationCertificates it checks the
// notation signatures instead, as source-controller does for
// spec.verify.provider notation: the signatures among the digest's
// referrers (the referrers API, else the sha256-<hex> tag), at most three
// tried, against the trust policy whose stores hold the certificates.
//
// An error means the check could not be made (bad key, unreachable
// registry, no such tag); an artifact without a valid signature is not an
// error but Status Unsigned or BadSignature.
func Verify(ctx context.Context, url string, opts ...VerifyOption) (*VerifyResult, error) {
	o, err := collect(opts, func(x VerifyOption, o *options) error { return x.applyVerify(o) })
	if err == nil && o.verifier == nil && len(o.identities) == 0 && o.notationPolicy == nil && o.notationCerts == nil {
		err = fmt.Errorf("%w: no key: use WithCosignPublicKey, WithCosignIdentity, or WithNotationTrustPolicy and WithNotationCertificates", ErrInvalidOption)
	}
	if err == nil {
		err = o.setNotationVerifier()
	}
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", redactRef(url), err)
	}
	res, err := guard(ctx, func() (*VerifyResult, error) { return verify(ctx, url, o) })
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", redactRef(url), err)
	}
	return res, nil
}

func verify(ctx context.Context, url string, o *options) (*VerifyResult, error) {
	ref, err := parseRef(url, o)
	if err != nil {
		return nil, err
	}
	ro := o.remoteOptions(ctx)
	desc, err := remote.Head(ref, ro...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", URL(ref), err)
	}
	d := ref.Context().Digest(desc.Digest.String())
	res := &VerifyResult{Repository: ref.Context().Name(), Digest: desc.Digest.String()}
	if t, ok := ref.(name.Tag); ok {
		res.Tag = t.TagStr()
	}
	if o.notationVerifier != nil {
		res.Status, res.Signatures, res.Reason, err = notationVerifyDigest(ctx, d, o.notationVerifier, ro)
	} else {
		res.Status, res.Signatures, res.Reason, err = verifyDigest(ctx, d, o.verifier, o, ro)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// verifyDigest verifies d's signatures with v as source-controller v1.9.6's
// cosign verifier does for a public key (internal/oci/cosign): Offline and
// IgnoreTlog, bundles first, else the legacy signature tag. A failed
// verification is a status with cosign's reason; err is for failures to
// ask (the registry).
//
// With no v, it verifies keyless signatures against o's identities
// (WithCosignIdentity) and trusted root, as source-controller does for
// spec.verify.matchOIDCIdentity: the transparency log entry and the SCT
// are checked.
func verifyDigest(ctx context.Context, d name.Digest, v signature.Verifier, o *options, ro []remote.Option) (VerifyStatus, int, string, error) {
	co := &cosign.CheckOpts{
		RegistryClientOpts: []ociremote.Option{ociremote.WithRemoteOptions(ro...)},
		SigVerifier:        v,
		Offline:            true,
		IgnoreTlog:         true,
	}
	if v == nil {
		tm, err := o.keylessTrustedMaterial()
		if err != nil {
			return "", 0, "", err
		}
		co = &cosign.CheckOpts{RegistryClientOpts: co.RegistryClientOpts, Identities: o.identities, TrustedMaterial: tm}
	}
	nameOpts := nameOptions(o)
	var (
		sigs []cosignoci.Signature
		err  error
	)
	bundles, _, berr := cosign.GetBundles(ctx, d, co.RegistryClientOpts, nameOpts...)
	if len(bundles) == 0 || berr != nil {
		sigs, _, err = cosign.VerifyImageSignatures(ctx, d, co)
	} else {
		co.NewBundleFormat = true
		sigs, _, err = cosign.VerifyImageAttestations(ctx, d, co, nameOpts...)
	}
	var (
		none     *cosign.ErrNoSignaturesFound
		noMatch  *cosign.ErrNoMatchingSignatures
		noAtt    *cosign.ErrNoMatchingAttestations
		failure  *cosign.VerificationFailure
		notFound *cosign.ErrImageTagNotFound
	)
	switch {
	case err == nil && len(sigs) > 0:
		return Verified, len(sigs), "", nil
	case err == nil:
		return Unsigned, 0, "no signature", nil
	case errors.As(err, &none):
		return Unsigned, 0, err.Error(), nil
	case errors.As(err, &noMatch), errors.As(err, &noAtt), errors.As(err, &failure):
		return BadSignature, 0, err.Error(), nil
	case errors.As(err, &notFound):
		return "", 0, "", fmt.Errorf("reading %s: %w", URL(d), err)
	case isNotFound(err):
		// The signature tag is gone: unsigned.
		return Unsigned, 0, err.Error(), nil
	}
	return "", 0, "", fmt.Errorf("verifying the signatures of %s: %w", URL(d), err)
}

// setNotationVerifier makes the notation verifier of WithNotationTrustPolicy
// and WithNotationCertificates, which go together, if they are given.
func (o *options) setNotationVerifier() error {
	var err error
	switch {
	case o.notationPolicy == nil && o.notationCerts == nil:
		return nil
	case o.notationPolicy == nil:
		return fmt.Errorf("%w: notation certificates without a trust policy: use WithNotationTrustPolicy", ErrInvalidOption)
	case o.notationCerts == nil:
		return fmt.Errorf("%w: a notation trust policy without certificates: use WithNotationCertificates", ErrInvalidOption)
	}
	if o.notationVerifier, err = newNotationVerifier(o.notationPolicy, o.notationCerts); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	return nil
}
