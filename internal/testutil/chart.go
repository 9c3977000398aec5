package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
)

// TestChart is fluxbuild's test chart, secrets-operator (the External
// Secrets CRDs, a Deployment and a validating webhook), from the
// repository's root.
func TestChart(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "fluxbuild", "testdata", "charts", "secrets-operator")
}

// PushChart packages the chart folder dir as `helm package` does and
// pushes it to ref (host/repo:tag) as `helm push` writes it: a config of
// Helm's config media type and one layer of its chart media type. It
// returns the packaged chart's bytes.
func PushChart(t testing.TB, dir, ref string) []byte {
	t.Helper()
	ch, err := loader.Load(dir)
	require.NoError(t, err, "loading the chart %s", dir)
	tgz, err := chartutil.Save(ch, t.TempDir())
	require.NoError(t, err, "packaging the chart %s", dir)
	data, err := os.ReadFile(tgz)
	require.NoError(t, err)
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), registry.ConfigMediaType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(data, registry.ChartLayerMediaType), MediaType: registry.ChartLayerMediaType})
	require.NoError(t, err)
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img), "pushing the chart %s to %s", dir, ref)
	return data
}
