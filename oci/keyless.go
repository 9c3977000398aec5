package oci

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
	"github.com/sigstore/cosign/v3/pkg/cosign"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	ctypes "github.com/sigstore/cosign/v3/pkg/types"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// The public-good Sigstore instances, cosign's defaults.
const (
	DefaultFulcioURL = "https://fulcio.sigstore.dev"
	DefaultRekorURL  = "https://rekor.sigstore.dev"
)

// sigstoreBundleArtifactType starts the artifact type of the referrers that
// hold sigstore bundles (cosign adds the bundle version).
const sigstoreBundleArtifactType = "application/vnd.dev.sigstore.bundle"

// CosignKeyless configures keyless signing (WithCosignKeyless).
type CosignKeyless struct {
	// IDToken is the OIDC identity token (a JWT) Fulcio certifies the
	// ephemeral key for, as cosign's --identity-token or
	// $SIGSTORE_ID_TOKEN: in CI, the provider's token for the audience
	// "sigstore". Required; fluxpack runs no browser or device flow.
	IDToken string
	// FulcioURL is the Fulcio instance (default DefaultFulcioURL).
	FulcioURL string
	// RekorURL is the Rekor transparency log, API v1 (default
	// DefaultRekorURL).
	RekorURL string
	// Fulcio and Rekor are reached with Go's default HTTP transport (the
	// system's trust store, $HTTPS_PROXY), not the registry's options.
}

// WithCosignKeyless signs the pushed artifact without a key of one's own,
// as `cosign sign` (v3) does by default: sigstore-go makes an ephemeral
// ECDSA P-256 key, Fulcio certifies it for the identity of k.IDToken, the
// signature is logged in Rekor, and the resulting sigstore bundle (v0.3,
// a DSSE envelope of an in-toto statement naming the manifest digest, with
// predicate type https://sigstore.dev/cosign/sign/v1) is attached to the
// artifact as an OCI referrer (the referrers API, or the sha256-<hex> tag
// schema). That is the signature source-controller's cosign verifier looks
// for first, and checks against spec.verify.matchOIDCIdentity and the
// Sigstore trusted root.
//
// The signature is made before any tag points at the artifact, as with
// WithCosignKey. An unchanged push adds a signature only when the artifact
// has no sigstore bundle at all: it cannot check an existing bundle's
// identity without the trusted root.
//
// Untested against the real Fulcio and Rekor: fluxpack's tests are
// offline and run the flow against a Fulcio and a Rekor served on
// loopback by the test (built on sigstore-go's testing CA), verifying the
// result with cosign's verifier as source-controller calls it with a
// custom trusted root.
func WithCosignKeyless(k CosignKeyless) PushOption {
	return pushOpt{func(o *options) error {
		ks, err := newKeylessSigner(k)
		if err != nil {
			return fmt.Errorf("%s: %w", "WithCosignKeyless", err)
		}
		return o.setSigner("WithCosignKeyless", ks)
	}}
}

// keylessSigner signs digests through Fulcio and Rekor.
type keylessSigner struct {
	token               string
	fulcioURL, rekorURL string
}

func newKeylessSigner(k CosignKeyless) (*keylessSigner, error) {
	if k.IDToken == "" {
		return nil, errors.New("no OIDC identity token: keyless signing needs one (cosign's --identity-token, $SIGSTORE_ID_TOKEN)")
	}
	if strings.Count(k.IDToken, ".") != 2 {
		// Say nothing of the token itself.
		return nil, errors.New("the OIDC identity token is not a JWT (three base64url parts separated by dots)")
	}
	ks := &keylessSigner{token: k.IDToken, fulcioURL: k.FulcioURL, rekorURL: k.RekorURL}
	if ks.fulcioURL == "" {
		ks.fulcioURL = DefaultFulcioURL
	}
	if ks.rekorURL == "" {
		ks.rekorURL = DefaultRekorURL
	}
	for _, u := range []struct{ what, url string }{{"Fulcio", ks.fulcioURL}, {"Rekor", ks.rekorURL}} {
		p, err := url.Parse(u.url)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
			return nil, fmt.Errorf("invalid %s URL %q: want http(s)://host[/path] without credentials", u.what, RedactURL(u.url))
		}
	}
	ks.fulcioURL, ks.rekorURL = strings.TrimSuffix(ks.fulcioURL, "/"), strings.TrimSuffix(ks.rekorURL, "/")
	return ks, nil
}

func (*keylessSigner) tool() string { return "cosign" }

// sign makes the bundle for d and attaches it as a referrer.
func (k *keylessSigner) sign(ctx context.Context, d name.Digest, _ *options, ro []remote.Option) error {
	bundle, err := k.bundle(ctx, d)
	if err != nil {
		return fmt.Errorf("signing %s keyless: %w", URL(d), err)
	}
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ro...), ociremote.WithNameOptions(digestNameOptions(d)...)}
	if err := ociremote.WriteAttestationNewBundleFormat(d, bundle, ctypes.CosignSignPredicateType, copts...); err != nil {
		return fmt.Errorf("writing the sigstore bundle of %s: %w", URL(d), err)
	}
	return nil
}

// bundle signs an in-toto statement naming d, as `cosign sign` v3 does,
// with an ephemeral key certified by Fulcio and logged in Rekor, and
// returns the sigstore bundle as JSON.
func (k *keylessSigner) bundle(ctx context.Context, d name.Digest) ([]byte, error) {
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
func (k *keylessSigner) redact(err error) error {
	if strings.Contains(err.Error(), k.token) {
		return errors.New(strings.ReplaceAll(err.Error(), k.token, "<identity token>"))
	}
	return err
}

// ensureSigned signs d unless it has a sigstore bundle already.
func (k *keylessSigner) ensureSigned(ctx context.Context, d name.Digest, o *options, ro []remote.Option) (bool, error) {
	copts := []ociremote.Option{ociremote.WithRemoteOptions(ro...)}
	bundles, _, err := cosign.GetBundles(ctx, d, copts, digestNameOptions(d)...)
	if err != nil && !isNotFound(err) {
		return false, fmt.Errorf("reading the sigstore bundles of %s: %w", URL(d), err)
	}
	if len(bundles) > 0 {
		return false, nil
	}
	return true, k.sign(ctx, d, o, ro)
}

// digestNameOptions keeps d's plain-HTTP registry plain HTTP when cosign
// parses d again.
func digestNameOptions(d name.Digest) []name.Option {
	if d.Context().Scheme() == "http" {
		return []name.Option{name.Insecure}
	}
	return nil
}
