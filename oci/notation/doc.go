// Package notation signs and verifies fluxpack's OCI artifacts with
// notation (notation-go), in the format source-controller's notation
// verifier reads (OCIRepository spec.verify.provider notation). Its
// signers and verifiers plug into package oci:
//
//	s, err := notation.NewKeySigner("signer.key", "signer-chain.crt")
//	if err != nil { … }
//	res, err := oci.Push(ctx, "./platform", "oci://ghcr.io/acme/platform:v1", oci.WithSigner(s))
//
//	v, err := notation.LoadVerifier("trustpolicy.json", "ca.crt")
//	res, err := oci.Verify(ctx, "oci://ghcr.io/acme/platform:v1", oci.WithVerifier(v))
//
// Package oci itself compiles in no signing stack; this package brings
// notation-go and its envelope formats (JWS, and COSE, which
// source-controller also reads).
//
// A signature (Signer) is a JWS envelope in an OCI image manifest whose
// subject is the artifact (config media type
// application/vnd.cncf.notary.signature), listed by the registry's
// referrers API or, where it has none, in the sha256-<hex> index of the
// referrers tag schema, which is where source-controller's notation
// verifier (oras-go) finds it. The registry is reached through
// go-containerregistry with the operation's transport, credentials and
// retries. Verifier checks signatures against a trust policy whose every
// store holds the same certificates, as source-controller's Secret gives
// them, and tries at most three signatures, as source-controller v1.9.6
// does.
//
// This package does no RFC 3161 timestamping and runs no notation plugin
// itself: give a plugin's signer to NewSigner.
package notation
