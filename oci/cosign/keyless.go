package cosign

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	intotov1 "github.com/in-toto/attestation/go/v1"
	sigcosign "github.com/sigstore/cosign/v3/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	ctypes "github.com/sigstore/cosign/v3/pkg/types"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

// The public-good Sigstore instances, cosign's defaults.
const (
	DefaultFulcioURL = "https://fulcio.sigstore.dev"
	DefaultRekorURL  = "https://rekor.sigstore.dev"
)

// Keyless configures keyless signing (NewKeylessSigner).
type Keyless struct {
	// IDToken is the OIDC identity token (a JWT) Fulcio certifies the
	// ephemeral key for, as cosign's --identity-token or
	// $SIGSTORE_ID_TOKEN: in CI, the provider's token for the audience
	// "sigstore". Required; this package runs no browser or device flow.
	IDToken string
	// FulcioURL is the Fulcio instance (default DefaultFulcioURL).
	FulcioURL string
	// RekorURL is the Rekor transparency log, API v1 (default
	// DefaultRekorURL).
	RekorURL string
	// Fulcio and Rekor are reached with Go's default HTTP transport (the
	// system's trust store, $HTTPS_PROXY), not the registry's options.
}

// KeylessSigner signs without a key of one's own, as `cosign sign` (v3)
// does by default: sigstore-go makes an ephemeral ECDSA P-256 key, Fulcio
// certifies it for the identity of the token, the signature is logged in
// Rekor, and the resulting sigstore bundle (v0.3, a DSSE envelope of an
// in-toto statement naming the manifest digest, with predicate type
// https://sigstore.dev/cosign/sign/v1) is attached to the artifact as an
// OCI referrer (the referrers API, or the sha256-<hex> tag schema). That is
// the signature source-controller's cosign verifier looks for first, and
// checks against spec.verify.matchOIDCIdentity and the Sigstore trusted
// root. It implements oci.Signer.
//
// An unchanged push adds a signature only when the artifact has no
// sigstore bundle at all: it cannot check an existing bundle's identity
// without the trusted root.
//
// Untested against the real Fulcio and Rekor: fluxpack's tests are offline
// and run the flow against a Fulcio and a Rekor served on loopback by the
// test (built on sigstore-go's testing CA), verifying the result with
// cosign's verifier as source-controller calls it with a custom trusted
// root.
type KeylessSigner struct {
	token               string
	fulcioURL, rekorURL string
}

var _ oci.Signer = (*KeylessSigner)(nil)

// NewKeylessSigner checks k and returns its signer.
func NewKeylessSigner(k Keyless) (*KeylessSigner, error) {
	if k.IDToken == "" {
		return nil, fmt.Errorf("%w: Keyless.IDToken: no OIDC identity token: keyless signing needs one", oci.ErrInvalidOption)
	}
	if strings.Count(k.IDToken, ".") != 2 {
		// Say nothing of the token itself.
		return nil, fmt.Errorf("%w: Keyless.IDToken: the OIDC identity token is not a JWT (three base64url parts separated by dots)", oci.ErrInvalidOption)
	}
	ks := &KeylessSigner{token: k.IDToken, fulcioURL: k.FulcioURL, rekorURL: k.RekorURL}
	if ks.fulcioURL == "" {
		ks.fulcioURL = DefaultFulcioURL
	}
	if ks.rekorURL == "" {
		ks.rekorURL = DefaultRekorURL
	}
	for _, u := range []struct{ field, url string }{{"FulcioURL", ks.fulcioURL}, {"RekorURL", ks.rekorURL}} {
		p, err := url.Parse(u.url)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
			return nil, fmt.Errorf("%w: Keyless.%s: invalid URL %q: want http(s)://host[/path] without credentials", oci.ErrInvalidOption, u.field, oci.RedactURL(u.url))
		}
	}
	ks.fulcioURL, ks.rekorURL = strings.TrimSuffix(ks.fulcioURL, "/"), strings.TrimSuffix(ks.rekorURL, "/")
	return ks, nil
}

// Provider returns "cosign".
func (*KeylessSigner) Provider() string { return Provider }

// Sign makes the bundle for d and attaches it as a referrer.
func (k *KeylessSigner) Sign(ctx context.Context, d name.Digest, ro []remote.Option) error {
	bundle, err := k.bundle(ctx, d)
	if err != nil {
		return fmt.Errorf("signing %s keyless: %w", oci.URL(d), err)
	}
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ro...), ociremote.WithNameOptions(regutil.NameOptions(d)...)}
	if err := ociremote.WriteAttestationNewBundleFormat(d, bundle, ctypes.CosignSignPredicateType, copts...); err != nil {
		return fmt.Errorf("writing the sigstore bundle of %s: %w", oci.URL(d), err)
	}
	return nil
}

// bundle signs an in-toto statement naming d, as `cosign sign` v3 does,
// with an ephemeral key certified by Fulcio and logged in Rekor, and
// returns the sigstore bundle as JSON.
func (k *KeylessSigner) bundle(ctx context.Context, d name.Digest) ([]byte, error) {
	alg, hex, ok := strings.Cut(d.DigestStr(), ":")
	if !ok {
		return nil, fmt.Errorf("parsing digest %q", d.DigestStr())
	}
	statement, err := protojson.Marshal(&intotov1.Statement{
		Type:          intotov1.StatementTypeUri,
		Subject:       []*intotov1.ResourceDescriptor{{Digest: map[string]string{alg: hex}}},
		PredicateType: ctypes.CosignSignPredicateType,
		Predicate:     &structpb.Struct{},
	})
	if err != nil {
		return nil, err
	}
	keypair, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		return nil, err
	}
	b, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: "application/vnd.in-toto+json"}, keypair, sign.BundleOptions{
		CertificateProvider:        sign.NewFulcio(&sign.FulcioOptions{BaseURL: k.fulcioURL, Timeout: 30 * time.Second, Retries: 1}),
		CertificateProviderOptions: &sign.CertificateProviderOptions{IDToken: k.token},
		TransparencyLogs:           []sign.Transparency{sign.NewRekor(&sign.RekorOptions{BaseURL: k.rekorURL, Timeout: 90 * time.Second, Retries: 1})},
		Context:                    ctx,
	})
	if err != nil {
		return nil, k.redact(err)
	}
	return protojson.Marshal(b)
}

// redact keeps the token out of an error from the sigstore libraries.
func (k *KeylessSigner) redact(err error) error {
	if strings.Contains(err.Error(), k.token) {
		return errors.New(strings.ReplaceAll(err.Error(), k.token, "<identity token>"))
	}
	return err
}

// SignIfUnsigned signs d unless it has a sigstore bundle already.
func (k *KeylessSigner) SignIfUnsigned(ctx context.Context, d name.Digest, ro []remote.Option) (bool, error) {
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ro...)}
	bundles, _, err := sigcosign.GetBundles(ctx, d, copts, regutil.NameOptions(d)...)
	if err != nil && !regutil.IsNotFound(err) {
		return false, fmt.Errorf("reading the sigstore bundles of %s: %w", oci.URL(d), err)
	}
	if len(bundles) > 0 {
		return false, nil
	}
	return true, k.Sign(ctx, d, ro)
}
