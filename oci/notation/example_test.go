package notation_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/notation"
)

// Read a trust policy as source-controller reads the trustpolicy.json of
// its Secret; a verifier made of it and the CA certificates goes to
// oci.Verify or oci.Promote with oci.WithVerifier, and a signer
// (NewKeySigner) to oci.Push with oci.WithSigner. See the package tests for
// the whole round trip against a registry.
func Example() {
	dir, _ := os.MkdirTemp("", "notation")
	defer os.RemoveAll(dir)
	policy := filepath.Join(dir, "trustpolicy.json")
	_ = os.WriteFile(policy, []byte(`{"version": "1.0", "trustPolicies": [{
		"name": "platform", "registryScopes": ["*"],
		"signatureVerification": {"level": "strict"},
		"trustStores": ["ca:platform"], "trustedIdentities": ["*"]}]}`), 0o600)

	doc, err := notation.LoadTrustPolicy(policy)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.TrustPolicies[0].Name, doc.TrustPolicies[0].SignatureVerification.VerificationLevel)

	_, err = notation.NewVerifier(doc, nil)
	fmt.Println(errors.Is(err, oci.ErrInvalidOption), err)
	// Output:
	// platform strict
	// true invalid option: a notation trust policy without certificates
}
