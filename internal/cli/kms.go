package cli

// The KMS providers of sigstore that fluxpack compiles in, for --key
// awskms://, gcpkms://, azurekms://, hashivault:// and openbao:// (each
// registers itself with sigstore's KMS registry; they read their
// credentials as cosign does, from the environment and the SDKs' files). Any other scheme goes to sigstore's
// CLI plugin sigstore-kms-<scheme> on $PATH. Package oci/cosign compiles in none,
// so that a program using the library chooses its own.
import (
	_ "github.com/sigstore/sigstore/pkg/signature/kms/aws"        // awskms://
	_ "github.com/sigstore/sigstore/pkg/signature/kms/azure"      // azurekms://
	_ "github.com/sigstore/sigstore/pkg/signature/kms/gcp"        // gcpkms://
	_ "github.com/sigstore/sigstore/pkg/signature/kms/hashivault" // hashivault://, openbao://
)
