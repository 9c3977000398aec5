//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	tree := func(content string) string {
		dir := t.TempDir()
		writeFiles(t, dir, map[string][]byte{"apps/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keyless\n  namespace: default\ndata:\n  v: " + content + "\n")})
		return dir
	}
	signed := push(t, c, tree("a"), "keyless-signed", "--sign", "cosign", "--keyless",
		"--identity-token", sig.Token(email), "--fulcio-url", sig.FulcioURL, "--rekor-url", sig.RekorURL)
	require.True(t, signed.Signed)
	push(t, c, tree("b"), "keyless-unsigned")

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
		src := source(tt.subject)
		src.Name = "keyless-" + tt.name
		src.Spec.URL = fmt.Sprintf("oci://%s/%s", c.Registry.Host, tt.repo)
		src.Spec.Insecure = true // plain HTTP on loopback
		c.create(src)
		ready, verified := waitVerification(t, c, client.ObjectKeyFromObject(src))
		assert.Equal(t, tt.want, ready.Status, "%s: Ready: %s", tt.name, ready.Message)
		assert.Equal(t, tt.want, verified.Status, "%s: SourceVerified: %s", tt.name, verified.Message)
		if tt.want == metav1.ConditionFalse {
			assert.Equal(t, sourcev1.VerificationError, verified.Reason, "%s: SourceVerified reason", tt.name)
		}
		line = append(line, fmt.Sprintf("%s: Ready=%s Verified=%s (%s)", tt.name, ready.Status, verified.Status, verified.Reason))
	}
	recordSummary("V2", "source-controller verifies fluxpack's keyless signatures (Fulcio, Rekor stand-ins on loopback, custom trusted root): "+strings.Join(line, "; "))
}
