package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
	"github.com/fluxpack/fluxpack/oci/notation"
)

// signFlags are push's signing flags: --sign, --key, --cert and the
// keyless ones.
type signFlags struct {
	sign, key, cert string
	keyless         keylessFlags
}

func (f *signFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.sign, "sign", "", `sign the artifact: "cosign" (with --key or --keyless) or "notation" (with --key and --cert)`)
	fs.StringVar(&f.key, "key", "", "private key for --sign: a file or env://VAR (cosign's encrypted format with $COSIGN_PASSWORD, or a plain PEM key), or for cosign a KMS key SCHEME://KEY (awskms, gcpkms, azurekms, hashivault, else a plugin sigstore-kms-SCHEME on $PATH); for notation a PEM file")
	fs.StringVar(&f.cert, "cert", "", "for --sign notation: the PEM certificate chain of --key, leaf first")
	f.keyless.bind(cmd)
}

// signer is the signer the flags ask for, nil without --sign.
func (f *signFlags) signer() (oci.Signer, error) {
	if f.keyless.set() && f.sign != "cosign" {
		return nil, fmt.Errorf("--keyless, --identity-token, --fulcio-url and --rekor-url are for --sign cosign")
	}
	switch {
	case f.sign == "cosign" && f.cert != "":
		return nil, fmt.Errorf("--cert is for --sign notation")
	case f.sign == "cosign" && f.keyless.keyless && f.key != "":
		return nil, fmt.Errorf("--keyless and --key exclude each other")
	case f.sign == "cosign" && f.keyless.keyless:
		k, err := f.keyless.options()
		if err != nil {
			return nil, err
		}
		s, err := cosign.NewKeylessSigner(k)
		if err != nil {
			return nil, keylessFlagError(err)
		}
		return s, nil
	case f.sign == "cosign" && f.keyless.set():
		return nil, fmt.Errorf("--identity-token, --fulcio-url and --rekor-url need --keyless")
	case f.sign == "cosign" && f.key != "":
		s, err := cosign.NewKeySigner(f.key, []byte(os.Getenv("COSIGN_PASSWORD")))
		if err != nil {
			return nil, fmt.Errorf("--key: %w (is $COSIGN_PASSWORD right?)", err)
		}
		return s, nil
	case f.sign == "cosign":
		return nil, fmt.Errorf("--sign cosign needs --key, or --keyless")
	case f.sign == "notation" && f.key != "" && f.cert != "":
		s, err := notation.NewKeySigner(f.key, f.cert)
		if err != nil {
			return nil, fmt.Errorf("--key, --cert: %w", err)
		}
		return s, nil
	case f.sign == "notation":
		return nil, fmt.Errorf("--sign notation needs --key and --cert")
	case f.sign != "":
		return nil, fmt.Errorf("invalid --sign %q: want cosign or notation", f.sign)
	case f.key != "" || f.cert != "":
		return nil, fmt.Errorf("--key and --cert need --sign")
	}
	return nil, nil
}
