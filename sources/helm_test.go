package sources_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/sources"
)

// newHelmRepo serves the packaged test chart behind the index made of
// its digest, on loopback.
func newHelmRepo(t *testing.T, index func(digest string) string) (*testutil.HelmRepo, []byte) {
	t.Helper()
	data, digest := testutil.PackagedTestChart(t)
	return testutil.ServeHelmRepo(t, index(digest), data), data
}

func entry(version, created, url, digest string) string {
	return fmt.Sprintf("  - name: secrets-operator\n    version: %s\n    created: %q\n    digest: %q\n    urls: [%s]\n", version, created, digest, url)
}

func TestHTTPHelmRepository(t *testing.T) {
	repo, data := newHelmRepo(t, func(digest string) string {
		return "apiVersion: v1\nentries:\n  secrets-operator:\n" +
			entry("0.3.1", "2026-01-01T00:00:00Z", "secrets-operator-0.3.1.tgz", digest) +
			entry("0.4.0", "2026-02-01T00:00:00Z", "secrets-operator-0.4.0.tgz", digest) +
			entry("0.4.0+build.2", "2026-02-03T00:00:00Z", "secrets-operator-0.4.0-b2.tgz", digest) +
			entry("0.4.0+build.1", "2026-02-02T00:00:00Z", "secrets-operator-0.4.0-b1.tgz", digest) +
			entry("1.0.0-rc.1", "2026-03-01T00:00:00Z", "secrets-operator-1.0.0-rc.1.tgz", digest) +
			entry("0.5.0", "2026-03-02T00:00:00Z", "secrets-operator-0.5.0.tgz", strings.Repeat("0", 64))
	})
	cases := []struct{ version, want string }{
		{"0.3.1", "0.3.1"},
		{"", "0.5.0"},                      // latest stable, the prerelease left out
		{"*", "0.5.0"},                     // the same
		{"~0.4.0", "0.4.0+build.2"},        // equal versions: the newest created
		{"0.4.0+build.1", "0.4.0+build.1"}, // an exact match first
		{">=1.0.0-0", "1.0.0-rc.1"},
	}
	for _, c := range cases {
		t.Run("version "+c.version, func(t *testing.T) {
			f, err := sources.New(t.TempDir())
			require.NoError(t, err)
			a, err := f.Chart(t.Context(), repo.URL, "secrets-operator", c.version)
			if c.want == "0.5.0" {
				require.Error(t, err, "0.5.0's digest is wrong in the index")
				assert.Contains(t, err.Error(), "the index says sha256:0000")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, a.Revision)
			got, err := os.ReadFile(a.Path)
			require.NoError(t, err)
			assert.Equal(t, data, got)
		})
	}

	t.Run("no match is the repository's answer", func(t *testing.T) {
		f, err := sources.New(t.TempDir())
		require.NoError(t, err)
		_, err = f.ResolveChart(t.Context(), repo.URL, "secrets-operator", ">=2.0.0")
		require.Error(t, err)
		assert.True(t, sources.IsNotFound(err), "%v", err)
		assert.Contains(t, err.Error(), "no 'secrets-operator' chart with version matching '>=2.0.0' found")
		_, err = f.ResolveChart(t.Context(), repo.URL, "other", "")
		assert.True(t, sources.IsNotFound(err), "%v", err)
		_, err = f.ResolveChart(t.Context(), repo.URL+"/missing", "other", "")
		require.Error(t, err)
		assert.False(t, sources.IsNotFound(err), "an unreachable index is not an answer: %v", err)
	})

	t.Run("cached by digest", func(t *testing.T) {
		dir := t.TempDir()
		f, err := sources.New(dir)
		require.NoError(t, err)
		n := repo.Downloads()
		_, err = f.ResolveChart(t.Context(), repo.URL, "secrets-operator", "0.3.1")
		require.NoError(t, err)
		f2, err := sources.New(dir)
		require.NoError(t, err)
		_, err = f2.ResolveChart(t.Context(), repo.URL, "secrets-operator", "0.4.0")
		require.NoError(t, err)
		assert.Equal(t, n+1, repo.Downloads(), "one chart, one download")
	})
}

func TestOCIHelmRepository(t *testing.T) {
	reg := testutil.NewRegistry(t)
	for _, tag := range []string{"0.3.1", "0.4.0", "1.0.0-rc.1"} {
		testutil.PushChart(t, testutil.TestChart(t), reg.Host+"/charts/secrets-operator:"+tag)
	}
	repoURL := "oci://" + reg.Host + "/charts"
	for _, c := range []struct{ version, want string }{{"0.3.1", "0.3.1"}, {"", "0.4.0"}, {"<0.4.0", "0.3.1"}, {">=1.0.0-0", "1.0.0-rc.1"}} {
		f, err := sources.New(t.TempDir())
		require.NoError(t, err)
		a, err := f.Chart(t.Context(), repoURL, "secrets-operator", c.version)
		require.NoError(t, err, c.version)
		assert.Equal(t, c.want, a.Revision, c.version)
		ch, err := loader.Load(a.Path)
		require.NoError(t, err)
		assert.Equal(t, "secrets-operator", ch.Name())
	}
	f, err := sources.New(t.TempDir())
	require.NoError(t, err)
	_, err = f.ResolveChart(t.Context(), repoURL, "secrets-operator", "9.9.9")
	assert.True(t, sources.IsNotFound(err), "%v", err)
	_, err = f.ResolveChart(t.Context(), repoURL, "secrets-operator", ">=2")
	assert.True(t, sources.IsNotFound(err), "%v", err)
	p, err := f.FetchChart(t.Context(), repoURL+"/secrets-operator", "0.3.1")
	require.NoError(t, err, "FetchChart, as lint calls it")
	assert.FileExists(t, p)

	info, err := oci.Describe(t.Context(), repoURL+"/secrets-operator:0.4.0")
	require.NoError(t, err)
	a, err := f.Chart(t.Context(), repoURL+"/secrets-operator", "", info.Digest)
	require.NoError(t, err, "an OCIRepository's spec.ref.digest")
	assert.Equal(t, info.Digest, a.Revision)
}
