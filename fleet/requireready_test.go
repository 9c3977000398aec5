package fleet_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestPromoteRequireReady: with RequireReady, Promote asks about the
// digest staging's tag holds before anything moves; its error refuses the
// promotion (wrapped, naming the cluster), its nil lets it through.
func TestPromoteRequireReady(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, f := fleetAt(t, reg.Host)
	_, err := fleet.Push(t.Context(), f, fleet.WithPushOptions(oci.WithInsecure(), oci.WithRevision("main@sha1:"+strings.Repeat("1", 40))))
	require.NoError(t, err)
	stagingURL, err := f.Artifact("staging")
	require.NoError(t, err)
	staging, err := oci.Describe(t.Context(), stagingURL, oci.WithInsecure())
	require.NoError(t, err)

	notReady := errors.New("Kustomization/flux-system/apps Failed: boom")
	var asked []string
	opts := fleet.PromoteOptions{Read: []oci.ListOption{oci.WithInsecure()}, Promote: []oci.PromoteOption{oci.WithInsecure()},
		RequireReady: func(_ context.Context, url, digest string) error {
			asked = append(asked, url+"@"+digest)
			return notReady
		}}
	reg.Reset()
	_, err = fleet.Promote(t.Context(), f, "prod", "staging", opts)
	require.ErrorIs(t, err, notReady, "Promote while staging is not Ready")
	assert.ErrorContains(t, err, `cluster "staging" does not run`)
	assert.ErrorContains(t, err, "nothing moved")
	assert.Equal(t, []string{stagingURL + "@" + staging.Digest}, asked, "RequireReady is asked about staging's artifact")
	for _, req := range reg.Requests() {
		assert.False(t, strings.HasPrefix(req, "PUT "), "a refused promotion wrote %s", req)
	}

	opts.RequireReady = func(_ context.Context, url, digest string) error {
		asked = append(asked, url+"@"+digest)
		return nil
	}
	res, err := fleet.Promote(t.Context(), f, "prod", "staging", opts)
	require.NoError(t, err, "Promote once staging is Ready")
	prodURL, err := f.Artifact("prod")
	require.NoError(t, err)
	prod, err := oci.Describe(t.Context(), prodURL, oci.WithInsecure())
	require.NoError(t, err)
	assert.Equal(t, prod.Digest, res.Digest, "prod's tag holds prod's own artifact")
	assert.NotEqual(t, staging.Digest, res.Digest, "prod was handed staging's artifact")
}
