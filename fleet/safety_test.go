package fleet_test

import (
	"os"
	"path/filepath"
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
