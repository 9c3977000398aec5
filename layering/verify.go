package layering

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
)

// Verify makes the stack's OCIRepository verify the artifact's signature
// before source-controller hands it on, so no layer applies an artifact
// that is unsigned, signed by another key or moved since signing:
// spec.verify {provider, secretRef: {name: secretName}}. provider is
// "cosign" or "notation"; for cosign the Secret holds the public key
// (Plan.VerifySecret, or WithVerifyKey when rendering a stack file), for
// notation the trust policy and certificates (Plan.NotationVerifySecret,
// or WithVerifyNotation). The
// Secret is never part of the rendered directory: it must be in the
// cluster before the artifact it vouches for, and an artifact must not
// carry the key it is checked with.
func Verify(provider, secretName string) StackOption {
	return funcStack(func(s *stack) {
		if provider != "cosign" && provider != "notation" {
			s.invalidf("invalid verify provider %q: want cosign or notation", provider)
			return
		}
		if msg := notSubdomain(secretName); msg != "" {
			s.invalidf("invalid verify Secret name %q: %s", secretName, msg)
			return
		}
		s.verify = &sourcev1.OCIRepositoryVerification{Provider: provider, SecretRef: &meta.LocalObjectReference{Name: secretName}}
	})
}

// VerifyKeyless makes the stack's OCIRepository verify keyless cosign
// signatures (`fluxpack push --sign cosign --keyless`, `cosign sign` with
// OIDC): spec.verify {provider: cosign, matchOIDCIdentity}, with no
// secretRef, so source-controller checks the Fulcio certificate against
// the Sigstore trusted root and accepts the artifact only when the
// certificate's OIDC issuer and subject match one of identities (Go
// regular expressions, matched by source-controller as cosign's
// --certificate-oidc-issuer-regexp and --certificate-identity-regexp are;
// anchor them with ^…$). At least one identity is needed: without one,
// any Sigstore identity would do. The stack file's source.verify takes
// the same field.
func VerifyKeyless(identities ...sourcev1.OIDCIdentityMatch) StackOption {
	return funcStack(func(s *stack) {
		if len(identities) == 0 {
			s.invalidf("VerifyKeyless needs at least one identity (issuer and subject)")
			return
		}
		s.verify = &sourcev1.OCIRepositoryVerification{Provider: "cosign", MatchOIDCIdentity: slices.Clone(identities)}
	})
}

// verificationProblems checks the identities of a keyless spec.verify:
// non-empty regular expressions source-controller can compile, only with
// provider cosign and without secretRef, which makes source-controller
// verify with keys and ignore them.
func verificationProblems(v *sourcev1.OCIRepositoryVerification) []string {
	if v == nil || len(v.MatchOIDCIdentity) == 0 {
		return nil
	}
	var msgs []string
	if v.Provider != "cosign" {
		msgs = append(msgs, fmt.Sprintf("verify.matchOIDCIdentity is for provider cosign, not %q", v.Provider))
	}
	if v.SecretRef != nil {
		msgs = append(msgs, "verify.matchOIDCIdentity is for keyless verification: with secretRef source-controller verifies with the Secret's keys and ignores it")
	}
	for i, id := range v.MatchOIDCIdentity {
		for _, f := range []struct{ field, re string }{{"issuer", id.Issuer}, {"subject", id.Subject}} {
			if f.re == "" {
				msgs = append(msgs, fmt.Sprintf("verify.matchOIDCIdentity[%d].%s is empty", i, f.field))
			} else if _, err := regexp.Compile(f.re); err != nil {
				msgs = append(msgs, fmt.Sprintf("verify.matchOIDCIdentity[%d].%s %q: %v", i, f.field, f.re, err))
			}
		}
	}
	return msgs
}
