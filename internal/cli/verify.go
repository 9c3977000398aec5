package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
	"github.com/fluxpack/fluxpack/oci/notation"
)

func newVerifyCmd(f *rootFlags) *cobra.Command {
	var (
		reg         registryFlags
		out         outputFlag
		key         string
		trustPolicy string
		certs       []string
		identity    identityFlags
	)
	cmd := &cobra.Command{
		Use:   "verify oci://HOST/REPOSITORY[:TAG|@DIGEST] (--key cosign.pub | --certificate-identity ID --certificate-oidc-issuer URL | --trust-policy trustpolicy.json --cert CA.crt)",
		Short: "Check that an artifact carries a cosign signature made with a key, or a notation signature a trust policy accepts",
		Long: `Verify resolves the tag to its digest and checks the digest's cosign
signatures with the public key, as source-controller does for an
OCIRepository with spec.verify.provider cosign and a key: offline, without
transparency log. --key is a PEM file, env://VAR, or a KMS key reference
SCHEME://KEY (as for push --sign cosign), whose public key is asked of the
KMS once.

With --trust-policy and --cert it checks the digest's notation signatures
instead, as source-controller does for spec.verify.provider notation: the
trust policy (notation's trustpolicy.json) with every certificate of --cert
(files, or directories of *.crt and *.pem files) in each of its trust stores.

With --certificate-identity (or -regexp) and --certificate-oidc-issuer (or
-regexp) it checks keyless signatures instead (push --sign cosign --keyless),
as source-controller does for spec.verify.matchOIDCIdentity: the Fulcio
certificate chains to the Sigstore trusted root (--trusted-root, else the
public-good root fetched through TUF, which needs the network), the
transparency log entry and the SCT verify, and the certificate names the
identity. Tested offline only, against a test Sigstore's trusted root.

Prints verified, unsigned, invalid (signatures, none made with the key or
accepted by the policy) or skipped (the trust policy skips the artifact)
with host/repository@sha256:… on stdout (JSON with -o json).

Exit code: 0 verified, 1 unsigned, invalid or skipped (the output says which),
2 error (bad key, policy or certificate file, unreachable registry, no such
tag, no trust policy for the repository).`,
		Example: `  fluxpack verify oci://ghcr.io/acme/platform:v1 --key cosign.pub
  fluxpack verify oci://ghcr.io/acme/platform:v1 --trust-policy trustpolicy.json --cert ca.crt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			opts := as[oci.VerifyOption](reg.options(f.log))
			notation := trustPolicy != "" || len(certs) > 0
			if key == "" && !notation && !identity.set() {
				return fmt.Errorf("--key is required, or --trust-policy and --cert for notation, or --certificate-identity[-regexp] and --certificate-oidc-issuer[-regexp] for keyless")
			}
			keys, err := keyOptions(key, trustPolicy, certs, &identity)
			if err != nil {
				return err
			}
			for _, k := range keys {
				opts = append(opts, k)
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			res, err := oci.Verify(ctx, args[0], opts...)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out == "json" {
				err = writeJSON(w, res)
			} else {
				_, err = fmt.Fprintf(w, "%s: %s\n", res.Status, res.Ref())
			}
			if err != nil {
				return err
			}
			switch res.Status {
			case oci.Unsigned:
				return &FindingError{Msg: fmt.Sprintf("%s is not signed: %s", args[0], res.Reason)}
			case oci.BadSignature:
				if notation {
					return &FindingError{Msg: fmt.Sprintf("%s has no signature the trust policy %s accepts: %s", args[0], trustPolicy, res.Reason)}
				}
				if identity.set() {
					return &FindingError{Msg: fmt.Sprintf("%s has no keyless signature of the identity: %s", args[0], res.Reason)}
				}
				return &FindingError{Msg: fmt.Sprintf("%s has no signature made with %s: %s", args[0], key, res.Reason)}
			case oci.Skipped:
				return &FindingError{Msg: fmt.Sprintf("%s is not verified: %s", args[0], res.Reason)}
			}
			return nil
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	cmd.Flags().StringVar(&key, "key", "", "cosign public key: a PEM file, env://VAR, or a KMS key SCHEME://KEY (as for push)")
	cmd.Flags().StringVar(&trustPolicy, "trust-policy", "", "notation trust policy (trustpolicy.json), with --cert")
	cmd.Flags().StringArrayVar(&certs, "cert", nil, "notation trust store: a certificate file or a directory of *.crt/*.pem files (repeatable)")
	identity.bind(cmd)
	return cmd
}

// keyOptions turns verify's and promote's key flags into the verifier
// option: a cosign public key, keyless identities, or a notation trust
// policy with its certificates.
func keyOptions(key, trustPolicy string, certs []string, identity *identityFlags) ([]oci.KeyOption, error) {
	var (
		v   oci.Verifier
		err error
	)
	switch {
	case key != "" && (trustPolicy != "" || len(certs) > 0):
		return nil, fmt.Errorf("--key (cosign) and --trust-policy/--cert (notation) exclude each other")
	case identity.set() && (key != "" || trustPolicy != "" || len(certs) > 0):
		return nil, fmt.Errorf("the keyless --certificate-* and --trusted-root flags exclude --key, --trust-policy and --cert")
	case identity.set():
		v, err = identity.verifier()
	case key != "":
		if v, err = cosign.NewKeyVerifier(key); err != nil {
			err = fmt.Errorf("--key: %w", err)
		}
	case trustPolicy == "" && len(certs) == 0:
		return nil, nil
	case trustPolicy == "":
		return nil, fmt.Errorf("--cert needs --trust-policy")
	case len(certs) == 0:
		return nil, fmt.Errorf("--trust-policy needs --cert")
	default:
		if v, err = notation.LoadVerifier(trustPolicy, certs...); err != nil {
			err = fmt.Errorf("--trust-policy, --cert: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	return []oci.KeyOption{oci.WithVerifier(v)}, nil
}
