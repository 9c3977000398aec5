package sources_test

import (
	"os"
	"path/filepath"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/sources"
)

func ociRepository(url string, ref *sourcev1.OCIRepositoryRef, ls *sourcev1.OCILayerSelector) *sourcev1.OCIRepository {
	return &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec:       sourcev1.OCIRepositorySpec{URL: url, Reference: ref, LayerSelector: ls},
	}
}

// pushVersions pushes one Flux artifact per version to url, each holding
// apps/web.yaml with its version, and returns their digests.
func pushVersions(t *testing.T, url string, versions ...string) map[string]string {
	t.Helper()
	digests := map[string]string{}
	for _, v := range versions {
		dir := t.TempDir()
		writeWeb(t, dir, "kind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: \""+v+"\"\n")
		res, err := oci.Push(t.Context(), dir, url+":"+v, oci.WithSource("test"), oci.WithRevision(v))
		require.NoError(t, err)
		digests[v] = res.Digest
	}
	return digests
}

func TestOCIRepository(t *testing.T) {
	reg := testutil.NewRegistry(t)
	url := "oci://" + reg.Host + "/platform/apps"
	d := pushVersions(t, url, "1.0.0", "1.2.0", "2.0.0-rc.1", "latest")
	cache := t.TempDir()
	digestOf := func(full string) string { // host/repo@sha256:… → sha256:…
		if _, dg, ok := cutAt(full); ok {
			return dg
		}
		return full
	}
	cases := []struct {
		name     string
		ref      *sourcev1.OCIRepositoryRef
		revision string
		content  string
	}{
		{"no ref: latest", nil, "latest@" + digestOf(d["latest"]), "latest"},
		{"tag", &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, "1.0.0@" + digestOf(d["1.0.0"]), "1.0.0"},
		{"semver", &sourcev1.OCIRepositoryRef{SemVer: ">=1.0.0"}, "1.2.0@" + digestOf(d["1.2.0"]), "1.2.0"},
		{"semver with filter", &sourcev1.OCIRepositoryRef{SemVer: ">=1.0.0-0", SemverFilter: `.*-rc.*`}, "2.0.0-rc.1@" + digestOf(d["2.0.0-rc.1"]), "2.0.0-rc.1"},
		{"digest over tag", &sourcev1.OCIRepositoryRef{Digest: digestOf(d["1.0.0"]), Tag: "1.2.0"}, digestOf(d["1.0.0"]), "1.0.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := sources.New(cache)
			require.NoError(t, err)
			a, err := f.OCIRepository(t.Context(), ociRepository(url, c.ref, nil))
			require.NoError(t, err)
			assert.Equal(t, c.revision, a.Revision)
			b, err := os.ReadFile(filepath.Join(a.Dir, "apps", "web.yaml"))
			require.NoError(t, err)
			assert.Contains(t, string(b), `v: "`+c.content+`"`)
		})
	}

	t.Run("layerSelector", func(t *testing.T) {
		f, err := sources.New(cache)
		require.NoError(t, err)
		a, err := f.OCIRepository(t.Context(), ociRepository(url, &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, &sourcev1.OCILayerSelector{MediaType: string(oci.ContentMediaType)}))
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(a.Dir, "apps", "web.yaml"))
		_, err = f.OCIRepository(t.Context(), ociRepository(url, &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, &sourcev1.OCILayerSelector{MediaType: "application/x-other"}))
		require.Error(t, err)
		assert.True(t, sources.IsNotFound(err), "%v", err)
		_, err = f.OCIRepository(t.Context(), ociRepository(url, &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, &sourcev1.OCILayerSelector{Operation: sourcev1.OCILayerCopy}))
		require.ErrorContains(t, err, "operation copy")
	})

	t.Run("not found", func(t *testing.T) {
		f, err := sources.New(cache)
		require.NoError(t, err)
		for _, ref := range []*sourcev1.OCIRepositoryRef{{Tag: "9.9.9"}, {SemVer: ">=3.0.0"}, {SemVer: ">=1.0.0", SemverFilter: "^nothing$"}} {
			_, err := f.OCIRepository(t.Context(), ociRepository(url, ref, nil))
			require.Error(t, err, "%+v", ref)
			assert.True(t, sources.IsNotFound(err), "%+v: %v", ref, err)
			assert.Contains(t, err.Error(), "OCIRepository/flux-system/apps")
		}
	})

	t.Run("cached by digest: a second run reads one manifest", func(t *testing.T) {
		dir := t.TempDir()
		f, err := sources.New(dir)
		require.NoError(t, err)
		_, err = f.OCIRepository(t.Context(), ociRepository(url, &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, nil))
		require.NoError(t, err)
		reg.Reset()
		f2, err := sources.New(dir)
		require.NoError(t, err)
		_, err = f2.OCIRepository(t.Context(), ociRepository(url, &sourcev1.OCIRepositoryRef{Tag: "1.0.0"}, nil))
		require.NoError(t, err)
		for _, r := range reg.Requests() {
			assert.NotContains(t, r, "/blobs/", "a cached artifact's layer was downloaded again")
		}
	})
}

func cutAt(s string) (string, string, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
