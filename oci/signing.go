package oci

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Signer signs an artifact in a registry. Push calls it with the pushed
// artifact's digest before any tag points at it. Package oci has none of
// its own, so that pushing costs no signing stack: package
// github.com/fluxpack/fluxpack/oci/cosign signs with cosign (keys, KMS,
// keyless) and package github.com/fluxpack/fluxpack/oci/notation with
// notation. Give one to Push with WithSigner.
type Signer interface {
	// Provider is the signature format, as OCIRepository's
	// spec.verify.provider names it: "cosign" or "notation".
	Provider() string
	// Sign signs the manifest at d and writes the signature to d's
	// repository, reaching the registry with ro (the operation's
	// transport, credentials, retries and context).
	Sign(ctx context.Context, d name.Digest, ro []remote.Option) error
	// SignIfUnsigned signs d unless a signature Sign would have made is
	// there already, and reports whether it signed: what an unchanged push
	// does.
	SignIfUnsigned(ctx context.Context, d name.Digest, ro []remote.Option) (bool, error)
}

// Verifier checks the signatures of an artifact in a registry, as
// source-controller checks an OCIRepository's spec.verify. The packages
// oci/cosign and oci/notation make them; give one to Verify or Promote with
// WithVerifier.
type Verifier interface {
	// Provider is the signature format: "cosign" or "notation".
	Provider() string
	// Verify checks the signatures of the manifest at d, reaching the
	// registry with ro. An artifact without a valid signature is not an
	// error but a Verification whose Status says so; an error means the
	// check could not be made (an unreachable registry, say).
	Verify(ctx context.Context, d name.Digest, ro []remote.Option) (Verification, error)
}

// Verification is a Verifier's answer.
type Verification struct {
	Status VerifyStatus
	// Signatures is how many signatures verified.
	Signatures int
	// Reason is cosign's or notation's account of a failed verification.
	Reason string
}

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

// WithSigner signs the pushed artifact with s before any tag points at it;
// an unchanged push has s sign what the tag holds unless it is signed
// already (Result.Signed). One signer at a time.
func WithSigner(s Signer) PushOption {
	return pushOpt{func(o *options) error { return setOnlyOne("WithSigner", "signer", &o.signer, s) }}
}

// WithVerifier makes Verify check the artifact's signatures with v, and
// Promote refuse an artifact v does not verify. One verifier at a time.
func WithVerifier(v Verifier) KeyOption {
	return verifyOpt{func(o *options) error { return setOnlyOne("WithVerifier", "verifier", &o.verifier, v) }}
}

// setOnlyOne stores v, not nil, in *slot, which may hold one at a time
// (a signer, a verifier): a second is refused, naming both providers.
func setOnlyOne[T interface {
	comparable
	Provider() string
}](option, what string, slot *T, v T) error {
	var none T
	switch {
	case v == none:
		return fmt.Errorf("%s: nil %s", option, what)
	case *slot != none:
		return fmt.Errorf("%s: one %s at a time (%s and %s)", option, what, (*slot).Provider(), v.Provider())
	}
	*slot = v
	return nil
}

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

// ErrNoVerifier is wrapped by the error of Verify called without
// WithVerifier.
var ErrNoVerifier = errors.New("no verifier: give WithVerifier a cosign or notation verifier (packages oci/cosign, oci/notation)")

// Verify checks the signatures of the artifact url names (by tag or
// digest) with the Verifier WithVerifier gives: cosign's
// (github.com/fluxpack/fluxpack/oci/cosign) or notation's
// (github.com/fluxpack/fluxpack/oci/notation), which check as
// source-controller does. The tag is resolved once and its digest
// verified.
//
// An error means the check could not be made (no verifier, an unreachable
// registry, no such tag); an artifact without a valid signature is not an
// error but Status Unsigned or BadSignature.
//
// Verify is Client.Verify with url parsed, on a Client of its own.
func Verify(ctx context.Context, url string, opts ...VerifyOption) (*VerifyResult, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("verifying %s: %w", redactRef(url), err)
	}
	return new(Client).Verify(ctx, ref, opts...)
}

// Verify checks the signatures of the artifact ref names, as the
// package-level Verify describes.
func (c *Client) Verify(ctx context.Context, ref Ref, opts ...VerifyOption) (*VerifyResult, error) {
	check := func(o *options) error {
		if o.verifier == nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, ErrNoVerifier)
		}
		return nil
	}
	return run(ctx, c, fmt.Sprintf("verifying %s", ref), opts, VerifyOption.applyVerify, check,
		func(o *options) (*VerifyResult, error) { return verify(ctx, ref.at(o).Reference(), o) })
}

func verify(ctx context.Context, ref name.Reference, o *options) (*VerifyResult, error) {
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
	v, err := o.verifier.Verify(ctx, d, ro)
	if err != nil {
		return nil, err
	}
	res.Status, res.Signatures, res.Reason = v.Status, v.Signatures, v.Reason
	return res, nil
}

// The artifact types of the referrers Promote copies with an artifact.
const (
	// NotationArtifactType is the artifact type of a notation signature
	// manifest, the config media type the referrers API lists it under.
	NotationArtifactType = "application/vnd.cncf.notary.signature"
	// SigstoreBundleArtifactType starts the artifact type of the referrers
	// that hold sigstore bundles (cosign adds the bundle version).
	SigstoreBundleArtifactType = "application/vnd.dev.sigstore.bundle"
)
