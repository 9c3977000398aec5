package oci_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// pushChart pushes fluxbuild's test chart to host/charts/secrets-operator:0.3.1
// as helm push writes it, and returns the packaged chart's bytes.
func pushChart(t *testing.T, host string) []byte {
	t.Helper()
	return testutil.PushChart(t, testutil.TestChart(t), host+"/charts/secrets-operator:0.3.1")
}

func TestPullChart(t *testing.T) {
	reg := testutil.NewRegistry(t)
	want := pushChart(t, reg.Host)
	dir := filepath.Join(t.TempDir(), "charts")

	p, err := oci.PullChart(t.Context(), "oci://"+reg.Host+"/charts/secrets-operator:0.3.1", dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "secrets-operator-0.3.1.tgz"), p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the pulled chart is the pushed one")
	ch, err := loader.Load(p)
	require.NoError(t, err, "loading the pulled chart")
	assert.Equal(t, "secrets-operator", ch.Name())

	t.Run("not a chart", func(t *testing.T) {
		img, err := random.Image(64, 1)
		require.NoError(t, err)
		ref, err := name.ParseReference(reg.Host + "/charts/secrets-operator:image")
		require.NoError(t, err)
		require.NoError(t, remote.Write(ref, img))
		url := "oci://" + reg.Host + "/charts/secrets-operator:image"
		_, err = oci.PullChart(t.Context(), url, dir)
		require.ErrorIs(t, err, oci.ErrNotChart, "PullChart of an image")
		assert.Contains(t, err.Error(), url)
		assert.NoFileExists(t, filepath.Join(dir, "secrets-operator-image.tgz"))
	})

	t.Run("missing tag", func(t *testing.T) {
		url := "oci://" + reg.Host + "/charts/secrets-operator:9.9.9"
		_, err := oci.PullChart(t.Context(), url, dir, oci.WithRetry(fastRetry))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "pulling chart "+url)
	})

	t.Run("invalid option", func(t *testing.T) {
		_, err := oci.PullChart(t.Context(), "oci://"+reg.Host+"/charts/secrets-operator:0.3.1", dir, oci.WithCreds(""))
		require.ErrorIs(t, err, oci.ErrInvalidOption)
	})
}

func TestChartFetcher(t *testing.T) {
	reg := testutil.NewRegistry(t)
	want := pushChart(t, reg.Host)

	_, err := oci.NewChartFetcher("")
	require.ErrorIs(t, err, oci.ErrInvalidOption, "NewChartFetcher without a directory")
	_, err = oci.NewChartFetcher(t.TempDir(), oci.WithCreds(""))
	require.ErrorIs(t, err, oci.ErrInvalidOption, "NewChartFetcher with empty credentials")

	f, err := oci.NewChartFetcher(t.TempDir(), oci.WithInsecure())
	require.NoError(t, err)
	url := "oci://" + reg.Host + "/charts/secrets-operator"
	p, err := f.FetchChart(t.Context(), url, "0.3.1")
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	reg.Reset()
	again, err := f.FetchChart(t.Context(), url, "0.3.1")
	require.NoError(t, err)
	assert.Equal(t, p, again)
	assert.Empty(t, reg.Requests(), "a chart already fetched is not fetched again")
}
