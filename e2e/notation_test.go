//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// TestNotationSignedArtifactVerified (V1) holds fluxpack's notation
// signatures to a real source-controller verifying with a trust policy
// (spec.verify, provider notation, the policy and the CA certificate in a
// Secret as layering renders it): an artifact fluxpack signed becomes Ready
// and SourceVerified, with the given policy and with layering's default
// one; an unsigned one, one signed under another CA and one whose tag moved
// to unsigned content after signing are refused. The registry is
// distribution v3.1.2, which has no referrers API: the signatures are
// found through the sha256-<hex> tag schema.
func TestNotationSignedArtifactVerified(t *testing.T) {
	c := StartCluster(t, Stock)
	pki := testutil.NewNotationPKI(t, t.TempDir(), "good")
	other := testutil.NewNotationPKI(t, t.TempDir(), "other")
	ca, err := os.ReadFile(pki.CA)
	require.NoError(t, err)
	policy, err := os.ReadFile(pki.TrustPolicy)
	require.NoError(t, err)

	// The Secrets, as `fluxpack render --verify-cert` writes them: one with
	// a policy for every repository, one with layering's default policy
	// for the plan's own repository.
	newPlan := func(repo, secret string) *layering.Plan {
		plan, err := layering.New("signed", layering.FromOCI("oci://"+c.Registry.Host+"/"+repo, tag),
			layering.Verify("notation", secret), layering.Namespace(fluxNamespace)).Layer("apps").Build()
		require.NoError(t, err)
		return plan
	}
	plan := newPlan("signed", "notation-trust")
	secret, err := render.NotationVerifySecret(plan, policy, ca)
	require.NoError(t, err)
	c.create(secret)
	const defaultRepo = "notation-default-policy"
	defaultPlan := newPlan(defaultRepo, "notation-default")
	secret, err = render.NotationVerifySecret(defaultPlan, nil, ca)
	require.NoError(t, err)
	c.create(secret)

	sign := []string{"--sign", "notation", "--key", pki.Key, "--cert", pki.Chain}
	cases := []struct {
		name    string
		repo    string
		plan    *layering.Plan
		prepare func(name string)
		want    metav1.ConditionStatus
	}{
		{"signed", "notation-signed", plan, func(name string) {
			res := push(t, c, verifyTree(t, "a"), name, sign...)
			require.True(t, res.Signed)
		}, metav1.ConditionTrue},
		{"default-policy", defaultRepo, defaultPlan, func(name string) {
			require.True(t, push(t, c, verifyTree(t, "a2"), name, sign...).Signed)
		}, metav1.ConditionTrue},
		{"unsigned", "notation-unsigned", plan, func(name string) { push(t, c, verifyTree(t, "b"), name) }, metav1.ConditionFalse},
		{"other-cert", "notation-other-cert", plan, func(name string) {
			push(t, c, verifyTree(t, "c"), name, "--sign", "notation", "--key", other.Key, "--cert", other.Chain)
		}, metav1.ConditionFalse},
		{"moved", "notation-moved", plan, func(name string) {
			push(t, c, verifyTree(t, "d"), name, sign...)
			moved := push(t, c, verifyTree(t, "e"), name)
			require.True(t, moved.Pushed, "the tag moved to unsigned content")
		}, metav1.ConditionFalse},
	}
	var line []string
	for _, tt := range cases {
		tt.prepare(tt.repo)
		line = append(line, checkVerification(t, c, tt.name, tt.plan.Source, "verify-"+tt.repo, tt.repo, tt.want))
	}
	recordSummary("V1", "source-controller verifies fluxpack's notation signatures (tag schema, distribution v3): "+strings.Join(line, "; "))
}
