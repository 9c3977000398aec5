package oci

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/sigstore-go/pkg/root"
)

// OIDCIdentity is a signer identity a keyless signature must carry: the
// OIDC issuer and the subject (an email, a CI workflow URL) of its Fulcio
// certificate, each given exactly or as a Go regular expression, as
// cosign's --certificate-oidc-issuer[-regexp] and
// --certificate-identity[-regexp], and source-controller's
// spec.verify.matchOIDCIdentity (regular expressions).
type OIDCIdentity struct {
	Issuer, IssuerRegexp   string
	Subject, SubjectRegexp string
}

// WithCosignIdentity makes Verify (and Promote) check keyless cosign
// signatures: a sigstore bundle or a legacy signature whose Fulcio
// certificate chains to the Sigstore trusted root (WithSigstoreTrustedRoot,
// else the public-good root, fetched through TUF as cosign and
// source-controller do; that needs the network) with a valid transparency
// log entry and an embedded SCT, and names one of the identities given
// (repeat the option for more). It excludes WithCosignPublicKey.
func WithCosignIdentity(id OIDCIdentity) KeyOption {
	return verifyOpt{func(o *options) error {
		if err := id.check(); err != nil {
			return fmt.Errorf("%s: %w", "WithCosignIdentity", err)
		}
		o.identities = append(o.identities, cosign.Identity{Issuer: id.Issuer, IssuerRegExp: id.IssuerRegexp, Subject: id.Subject, SubjectRegExp: id.SubjectRegexp})
		return nil
	}}
}

func (id OIDCIdentity) check() error {
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

// WithSigstoreTrustedRoot verifies keyless signatures (WithCosignIdentity)
// against the Sigstore trusted root in the file at path (sigstore's
// trusted_root.json, as `cosign trusted-root create` writes it for a
// private Sigstore) instead of the public-good one.
func WithSigstoreTrustedRoot(path string) KeyOption {
	return verifyOpt{func(o *options) error {
		tr, err := root.NewTrustedRootFromPath(path)
		if err != nil {
			return fmt.Errorf("%s: reading the trusted root %s: %w", "WithSigstoreTrustedRoot", path, err)
		}
		o.trustedRoot = tr
		return nil
	}}
}

// keylessTrustedMaterial returns the trusted root keyless verification
// checks against: WithSigstoreTrustedRoot's, else the public-good one.
func (o *options) keylessTrustedMaterial() (root.TrustedMaterial, error) {
	if o.trustedRoot != nil {
		return o.trustedRoot, nil
	}
	tm, err := cosign.TrustedRoot()
	if err != nil {
		return nil, fmt.Errorf("fetching the public-good Sigstore trusted root (TUF): %w", err)
	}
	return tm, nil
}
