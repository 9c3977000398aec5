// Package cosign signs and verifies fluxpack's OCI artifacts with cosign,
// in the formats source-controller's cosign verifier reads
// (OCIRepository spec.verify.provider cosign). Its signers and verifiers
// plug into package oci:
//
//	s, err := cosign.NewKeySigner("cosign.key", []byte(os.Getenv("COSIGN_PASSWORD")))
//	if err != nil { … }
//	res, err := oci.Push(ctx, "./platform", "oci://ghcr.io/acme/platform:v1", oci.WithSigner(s))
//
//	v, err := cosign.NewKeyVerifier("cosign.pub")
//	res, err := oci.Verify(ctx, "oci://ghcr.io/acme/platform:v1", oci.WithVerifier(v))
//
// Package oci itself compiles in no signing stack: a program that only
// pushes does not pay for sigstore. This package does (sigstore, cosign,
// sigstore-go).
//
// Key signatures (Signer: NewKeySigner, NewSigner) are cosign's key-based
// format: a simple-signing payload naming the manifest digest, signed with
// SHA-256, under the repository's sha256-<hex>.sig tag (no transparency
// log, no sigstore bundle), which source-controller verifies with a public
// key. A key is a file or env://VAR holding cosign's encrypted format
// (decrypted with the password, $COSIGN_PASSWORD in cosign) or a plain PEM
// key (ECDSA, RSA or Ed25519). Verifier (NewKeyVerifier, NewVerifier)
// checks them as source-controller does: offline, IgnoreTlog, a sigstore
// bundle found through the referrers API taking precedence over the
// signature tag.
//
// A key reference scheme://… other than env:// is a KMS key, resolved by
// sigstore's KMS registry as cosign's --key is: a provider compiled into
// the program (KMSProviders), else sigstore's CLI plugin
// sigstore-kms-<scheme> on $PATH. Its public key is read when the key is
// loaded; each signature is one call to the KMS. This package compiles in
// no provider: a program adds one by importing it (the fluxpack command
// does for aws, gcp, azure and hashivault); ErrUnknownKMS says a scheme
// has neither.
//
// Keyless (KeylessSigner) signs as `cosign sign` v3 does: sigstore-go makes
// an ephemeral key, Fulcio certifies it for the OIDC identity token, Rekor
// logs the signature, and the sigstore bundle (a DSSE in-toto statement
// naming the digest) becomes an OCI referrer of the artifact, where
// source-controller's cosign verifier looks first when spec.verify has
// matchOIDCIdentity. KeylessVerifier checks such signatures for
// spec.verify.matchOIDCIdentity, against a trusted root file or the
// public-good one (TUF). All of it is untested against the real Fulcio,
// Rekor and TUF root: fluxpack's tests run offline against stand-ins on
// loopback (internal/testutil.Sigstore) and their trusted root.
//
// This package does no RFC 3161 timestamping, reads no PKCS#11 or
// Kubernetes key references (load such a key with sigstore's libraries and
// give it to NewSigner), and runs no browser or device OIDC flow.
package cosign
