//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// TestSignedArtifactVerified (V0) holds fluxpack's cosign signatures to a
// real source-controller verifying with the public key (spec.verify,
// provider cosign, the key in a Secret as layering renders it): an artifact
// fluxpack signed becomes Ready and SourceVerified; an unsigned one, one
// signed with another key and one whose tag moved to unsigned content after
// signing are refused. An artifact signed with a KMS key reference
// (through sigstore's KMS plugin mechanism) verifies with its public key.
func TestSignedArtifactVerified(t *testing.T) {
	c := StartCluster(t, Stock)
	keys := t.TempDir()
	key, pub := testutil.CosignKeyPair(t, keys, "e2e-pass")
	otherKey, _ := testutil.PKCS8KeyPair(t, keys, "other", false)
	t.Setenv("COSIGN_PASSWORD", "e2e-pass")

	// The public key's Secret, as `fluxpack render --verify-key` writes it.
	plan, err := layering.New("signed", layering.FromOCI("oci://"+c.Registry.Host+"/signed", tag),
		layering.Verify("cosign", "cosign-pub"), layering.Namespace(fluxNamespace)).Layer("apps").Build()
	require.NoError(t, err)
	pem, err := os.ReadFile(pub)
	require.NoError(t, err)
	secret, err := render.VerifySecret(plan, pem)
	require.NoError(t, err)
	c.create(secret)
	// A KMS key (sigstore's KMS registry running the test's CLI plugin,
	// as it runs any sigstore-kms-<scheme>), verified with its public key
	// in a Secret of its own.
	kmsRef, kmsPub, _ := testutil.KMSPlugin(t)
	kmsPlan, err := layering.New("signed", layering.FromOCI("oci://"+c.Registry.Host+"/signed", tag),
		layering.Verify("cosign", "kms-pub"), layering.Namespace(fluxNamespace)).Layer("apps").Build()
	require.NoError(t, err)
	kmsPEM, err := os.ReadFile(kmsPub)
	require.NoError(t, err)
	kmsSecret, err := render.VerifySecret(kmsPlan, kmsPEM)
	require.NoError(t, err)
	c.create(kmsSecret)

	cases := []struct {
		name    string
		prepare func(name string)
		want    metav1.ConditionStatus
		plan    *layering.Plan // the OCIRepository's verify; nil: plan's
	}{
		{"signed", func(name string) {
			res := push(t, c, verifyTree(t, "a"), name, "--sign", "cosign", "--key", key)
			require.True(t, res.Signed)
		}, metav1.ConditionTrue, nil},
		{"kms", func(name string) {
			res := push(t, c, verifyTree(t, "k"), name, "--sign", "cosign", "--key", kmsRef)
			require.True(t, res.Signed)
		}, metav1.ConditionTrue, kmsPlan},
		{"unsigned", func(name string) { push(t, c, verifyTree(t, "b"), name) }, metav1.ConditionFalse, nil},
		{"other-key", func(name string) { push(t, c, verifyTree(t, "c"), name, "--sign", "cosign", "--key", otherKey) }, metav1.ConditionFalse, nil},
		{"moved", func(name string) {
			push(t, c, verifyTree(t, "d"), name, "--sign", "cosign", "--key", key)
			moved := push(t, c, verifyTree(t, "e"), name)
			require.True(t, moved.Pushed, "the tag moved to unsigned content")
		}, metav1.ConditionFalse, nil},
	}
	var line []string
	for _, tt := range cases {
		name := "verify-" + tt.name
		tt.prepare(name)
		p := plan
		if tt.plan != nil {
			p = tt.plan
		}
		line = append(line, checkVerification(t, c, tt.name, p.Source, name, name, tt.want))
	}
	recordSummary("V0", "source-controller verifies fluxpack's cosign signatures: "+strings.Join(line, "; "))
}

// verifyTree writes a tree of one ConfigMap (apps/cm.yaml) whose data is
// content: each signing case pushes content of its own.
func verifyTree(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string][]byte{"apps/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed\n  namespace: default\ndata:\n  v: " + content + "\n")})
	return dir
}

// checkVerification creates src (named name, reading the repository repo
// over plain HTTP on loopback), waits until source-controller has decided
// on it and checks the decision is want, a refusal being a
// VerificationError. It returns the summary's account of the case.
func checkVerification(t *testing.T, c *Cluster, label string, src *sourcev1.OCIRepository, name, repo string, want metav1.ConditionStatus) string {
	t.Helper()
	src = src.DeepCopy()
	src.Name = name
	src.Spec.URL = fmt.Sprintf("oci://%s/%s", c.Registry.Host, repo)
	src.Spec.Insecure = true
	c.create(src)
	ready, verified := waitVerification(t, c, client.ObjectKeyFromObject(src))
	assert.Equal(t, want, ready.Status, "%s: Ready: %s", label, ready.Message)
	assert.Equal(t, want, verified.Status, "%s: SourceVerified: %s", label, verified.Message)
	if want == metav1.ConditionFalse {
		assert.Equal(t, sourcev1.VerificationError, verified.Reason, "%s: SourceVerified reason", label)
	}
	t.Logf("%s: Ready=%s SourceVerified=%s: %s", label, ready.Status, verified.Status, verified.Message)
	return fmt.Sprintf("%s: Ready=%s Verified=%s (%s)", label, ready.Status, verified.Status, verified.Reason)
}

// waitVerification waits until source-controller has decided on the
// OCIRepository, and returns its Ready and SourceVerified conditions.
func waitVerification(t *testing.T, c *Cluster, key client.ObjectKey) (ready, verified metav1.Condition) {
	t.Helper()
	c.poll("OCIRepository/"+key.String()+" to be verified", 2*time.Minute, func(ctx context.Context) (bool, error) {
		var got sourcev1.OCIRepository
		if err := c.Client.Get(ctx, key, &got); err != nil {
			return false, err
		}
		r := apimeta.FindStatusCondition(got.Status.Conditions, meta.ReadyCondition)
		v := apimeta.FindStatusCondition(got.Status.Conditions, sourcev1.SourceVerifiedCondition)
		if r == nil || v == nil || r.ObservedGeneration != got.Generation || r.Status == metav1.ConditionUnknown {
			return false, nil
		}
		ready, verified = *r, *v
		return true, nil
	})
	return ready, verified
}
