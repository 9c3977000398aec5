//go:build e2e

package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// TestKeylessSignedArtifactVerified (V2) holds fluxpack's keyless cosign
// signatures to a real source-controller: `fluxpack push --sign cosign
// --keyless` against a Fulcio and a Rekor served on loopback by the test
// (stand-ins: the public-good Sigstore cannot be reached offline), and an
// OCIRepository rendered by layering.VerifyKeyless whose
// spec.verify.trustedRootSecretRef names the stand-ins' trusted_root.json.
// The signed artifact becomes Ready and SourceVerified; the same artifact
// checked for another identity, and an unsigned one, are refused.
func TestKeylessSignedArtifactVerified(t *testing.T) {
	c := StartCluster(t, Stock)
	sig := testutil.NewSigstore(t)
	const email = "platform@fluxpack.test"
	trusted, err := os.ReadFile(sig.TrustedRootFile(t))
	require.NoError(t, err)
	c.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sigstore-root", Namespace: fluxNamespace},
		Data: map[string][]byte{"trusted_root.json": trusted}})

	source := func(subject string) *sourcev1.OCIRepository {
		plan, err := layering.New("keyless", layering.FromOCI("oci://"+c.Registry.Host+"/keyless", tag), layering.Namespace(fluxNamespace),
			layering.VerifyKeyless(sourcev1.OIDCIdentityMatch{Issuer: "^" + regexp.QuoteMeta(sig.Issuer) + "$", Subject: "^" + regexp.QuoteMeta(subject) + "$"}),
		).Layer("apps").Build()
		require.NoError(t, err)
		src := plan.Source.DeepCopy()
		// A private Sigstore's root, as source-controller v1.9 reads it.
		src.Spec.Verify.TrustedRootSecretRef = &meta.LocalObjectReference{Name: "sigstore-root"}
		return src
	}
	signed := push(t, c, verifyTree(t, "a"), "keyless-signed", "--sign", "cosign", "--keyless",
		"--identity-token", sig.Token(email), "--fulcio-url", sig.FulcioURL, "--rekor-url", sig.RekorURL)
	require.True(t, signed.Signed)
	push(t, c, verifyTree(t, "b"), "keyless-unsigned")

	cases := []struct {
		name, repo, subject string
		want                metav1.ConditionStatus
	}{
		{"signed", "keyless-signed", email, metav1.ConditionTrue},
		{"other-identity", "keyless-signed", "someone-else@fluxpack.test", metav1.ConditionFalse},
		{"unsigned", "keyless-unsigned", email, metav1.ConditionFalse},
	}
	var line []string
	for _, tt := range cases {
		line = append(line, checkVerification(t, c, tt.name, source(tt.subject), "keyless-"+tt.name, tt.repo, tt.want))
	}
	recordSummary("V2", "source-controller verifies fluxpack's keyless signatures (Fulcio, Rekor stand-ins on loopback, custom trusted root): "+strings.Join(line, "; "))
}
