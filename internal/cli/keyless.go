package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
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
	fs.StringVar(&k.fulcioURL, "fulcio-url", cosign.DefaultFulcioURL, "with --keyless: the Fulcio instance")
	fs.StringVar(&k.rekorURL, "rekor-url", cosign.DefaultRekorURL, "with --keyless: the Rekor transparency log")
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
func (k *keylessFlags) options() (cosign.Keyless, error) {
	token, from := k.token, "--identity-token"
	if token == "" {
		token, from = os.Getenv("SIGSTORE_ID_TOKEN"), "$SIGSTORE_ID_TOKEN"
	}
	if token == "" {
		return cosign.Keyless{}, fmt.Errorf("--keyless needs an OIDC identity token: --identity-token, or $SIGSTORE_ID_TOKEN")
	}
	if fi, err := os.Stat(token); from == "--identity-token" && err == nil && fi.Mode().IsRegular() {
		// A file holding the token, as cosign's --identity-token takes.
		raw, err := os.ReadFile(token)
		if err != nil {
			return cosign.Keyless{}, fmt.Errorf("reading --identity-token: %w", err)
		}
		token = strings.TrimSpace(string(raw))
	}
	return cosign.Keyless{IDToken: token, FulcioURL: k.fulcioURL, RekorURL: k.rekorURL}, nil
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

// verifier turns the flags into a keyless verifier; the library checks
// them, and its errors are given the flags' names.
func (f *identityFlags) verifier() (oci.Verifier, error) {
	v, err := cosign.NewKeylessVerifier(f.trustedRoot, cosign.Identity{
		Issuer: f.issuer, IssuerRegexp: f.issuerRegexp, Subject: f.identity, SubjectRegexp: f.identityRegexp,
	})
	if err != nil {
		return nil, fmt.Errorf("keyless verification: %w", flagWorded{err, keylessFlagNames.Replace(err.Error())})
	}
	return v, nil
}

// keylessFlagNames names the fields of cosign.Keyless and cosign.Identity
// as the flags that set them.
var keylessFlagNames = strings.NewReplacer(
	"Keyless.IDToken", "--identity-token",
	"Keyless.FulcioURL", "--fulcio-url",
	"Keyless.RekorURL", "--rekor-url",
	"IssuerRegexp", "--certificate-oidc-issuer-regexp",
	"SubjectRegexp", "--certificate-identity-regexp",
	"Issuer", "--certificate-oidc-issuer",
	"Subject", "--certificate-identity",
)

// keylessFlagError names the fields in a keyless option error as flags.
func keylessFlagError(err error) error {
	return fmt.Errorf("%s: %w", "--keyless", flagWorded{err, keylessFlagNames.Replace(err.Error())})
}
