package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

// keylessFlags are push's flags for keyless cosign signing, named as
// cosign's.
type keylessFlags struct {
	keyless   bool
	token     string
	fulcioURL string
	rekorURL  string
	cmd       *cobra.Command
}

func (k *keylessFlags) bind(cmd *cobra.Command) {
	k.cmd = cmd
	fs := cmd.Flags()
	fs.BoolVar(&k.keyless, "keyless", false, "with --sign cosign: sign keyless (OIDC), with a Fulcio certificate and a Rekor entry; untested against the real Fulcio and Rekor")
	fs.StringVar(&k.token, "identity-token", "", "with --keyless: the OIDC identity token, or a file holding it (default $SIGSTORE_ID_TOKEN)")
	fs.StringVar(&k.fulcioURL, "fulcio-url", oci.DefaultFulcioURL, "with --keyless: the Fulcio instance")
	fs.StringVar(&k.rekorURL, "rekor-url", oci.DefaultRekorURL, "with --keyless: the Rekor transparency log")
}

// set reports whether any keyless flag was given.
func (k *keylessFlags) set() bool {
	for _, f := range []string{"keyless", "identity-token", "fulcio-url", "rekor-url"} {
		if k.cmd.Flags().Changed(f) {
			return true
		}
	}
	return false
}

// options reads the token: the flag's value, the file it names, else
// $SIGSTORE_ID_TOKEN. Errors never hold the token.
func (k *keylessFlags) options() (oci.CosignKeyless, error) {
	token, from := k.token, "--identity-token"
	if token == "" {
		token, from = os.Getenv("SIGSTORE_ID_TOKEN"), "$SIGSTORE_ID_TOKEN"
	}
	if token == "" {
		return oci.CosignKeyless{}, fmt.Errorf("--keyless needs an OIDC identity token: --identity-token, or $SIGSTORE_ID_TOKEN")
	}
	if fi, err := os.Stat(token); from == "--identity-token" && err == nil && fi.Mode().IsRegular() {
		// A file holding the token, as cosign's --identity-token takes.
		raw, err := os.ReadFile(token)
		if err != nil {
			return oci.CosignKeyless{}, fmt.Errorf("reading --identity-token: %w", err)
		}
		token = strings.TrimSpace(string(raw))
	}
	return oci.CosignKeyless{IDToken: token, FulcioURL: k.fulcioURL, RekorURL: k.rekorURL}, nil
}

// identityFlags are verify's and promote's flags for keyless signatures,
// named as cosign verify's.
type identityFlags struct {
	identity, identityRegexp string
	issuer, issuerRegexp     string
	trustedRoot              string
}

func (f *identityFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.identity, "certificate-identity", "", "keyless: the signer's identity (email, workflow URL) the Fulcio certificate must name")
	fs.StringVar(&f.identityRegexp, "certificate-identity-regexp", "", "keyless: a Go regular expression the identity must match, as spec.verify.matchOIDCIdentity.subject")
	fs.StringVar(&f.issuer, "certificate-oidc-issuer", "", "keyless: the OIDC issuer the certificate must name")
	fs.StringVar(&f.issuerRegexp, "certificate-oidc-issuer-regexp", "", "keyless: a Go regular expression the issuer must match, as spec.verify.matchOIDCIdentity.issuer")
	fs.StringVar(&f.trustedRoot, "trusted-root", "", "keyless: sigstore's trusted_root.json of a private Sigstore (default: the public-good root, through TUF)")
}

// set reports whether any of the flags was given.
func (f *identityFlags) set() bool {
	return f.identity != "" || f.identityRegexp != "" || f.issuer != "" || f.issuerRegexp != "" || f.trustedRoot != ""
}

// options turns the flags into Verify's options; the library checks them.
func (f *identityFlags) options() []oci.KeyOption {
	if !f.set() {
		return nil
	}
	opts := []oci.KeyOption{oci.WithCosignIdentity(oci.OIDCIdentity{
		Issuer: f.issuer, IssuerRegexp: f.issuerRegexp, Subject: f.identity, SubjectRegexp: f.identityRegexp,
	})}
	if f.trustedRoot != "" {
		opts = append(opts, oci.WithSigstoreTrustedRoot(f.trustedRoot))
	}
	return opts
}
