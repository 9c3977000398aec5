package fleet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestPushRefusesSensitiveOutputs: the fleet's own outputs files are left
// out of every artifact, but another file of the stack's folder holding an
// output marked sensitive fails every cluster, naming the file and the
// output, with nothing uploaded; oci.WithAllowSecrets lets it through.
func TestPushRefusesSensitiveOutputs(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir, f := fleetAt(t, reg.Host)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old-tf.json"), []byte(`{"token": {"sensitive": true, "type": "string", "value": "CANARY-fleet"}}`), 0o600))
	res, err := fleet.Push(t.Context(), f, pushOpts)
	require.ErrorIs(t, err, fleet.ErrSomeFailed)
	require.ErrorIs(t, err, oci.ErrSensitiveOutput)
	assert.NotContains(t, err.Error(), "CANARY")
	for _, r := range res {
		assert.Equal(t, fleet.Failed, r.Status, r.Cluster)
		assert.Contains(t, r.Error, filepath.Join(dir, "old-tf.json")+`:1: Terraform/OpenTofu output "token"`)
	}
	assert.Zero(t, reg.BlobUploads())

	res, err = fleet.Push(t.Context(), f, pushOpts, fleet.WithTreeOptions(oci.WithAllowSecrets()))
	require.NoError(t, err)
	for _, r := range res {
		assert.Equal(t, fleet.Pushed, r.Status, r.Cluster)
	}
}

// TestPushTagsRevision: every cluster's artifact is tagged with its source
// revision too (oci.RevisionTag), and an unchanged push of the same
// revision costs no request for that tag.
func TestPushTagsRevision(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, f := fleetAt(t, reg.Host)
	res, err := fleet.Push(t.Context(), f, pushOpts)
	require.NoError(t, err)
	rev := "main@sha1:" + strings.Repeat("0", 40)
	for _, r := range res {
		info, err := oci.Describe(t.Context(), strings.TrimSuffix(r.URL, ":main")+":"+oci.RevisionTag("main", rev), oci.WithInsecure())
		require.NoError(t, err, r.Cluster)
		assert.Equal(t, r.Digest, info.Digest, "%s: the revision tag names the cluster's artifact", r.Cluster)
		assert.Equal(t, rev, info.Revision)
	}
	reg.Reset()
	again, err := fleet.Push(t.Context(), f, pushOpts)
	require.NoError(t, err)
	for _, r := range again {
		assert.Equal(t, fleet.Unchanged, r.Status)
	}
	for _, req := range reg.Requests() {
		assert.NotContains(t, req, "-rev-", "an unchanged push looked up the revision tag")
	}
}
