package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// PackagedTestChart returns TestChart packaged as `helm package` writes
// it, and the hex sha256 an index.yaml gives as its digest.
func PackagedTestChart(t testing.TB) ([]byte, string) {
	t.Helper()
	ch, err := loader.Load(TestChart(t))
	require.NoError(t, err)
	tgz, err := chartutil.Save(ch, t.TempDir())
	require.NoError(t, err)
	data, err := os.ReadFile(tgz)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])
}

// HelmIndex is an index.yaml listing the packaged test chart as
// secrets-operator at each version, created a day apart in that order.
func HelmIndex(digest string, versions ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n  secrets-operator:\n")
	for i, v := range versions {
		fmt.Fprintf(&b, "  - {name: secrets-operator, apiVersion: v2, version: %q, created: \"2026-01-%02dT00:00:00Z\", digest: %q, urls: [secrets-operator-%s.tgz]}\n", v, i+1, digest, v)
	}
	return b.String()
}

// HelmRepo is an HTTP Helm repository on loopback: its index.yaml, and the
// same packaged chart at every .tgz path.
type HelmRepo struct {
	URL       string
	downloads atomic.Int32
}

// Downloads counts the charts the repository served.
func (r *HelmRepo) Downloads() int { return int(r.downloads.Load()) }

// ServeHelmRepo serves index at URL/index.yaml (nowhere else) and chart at every .tgz
// path until the test ends.
func ServeHelmRepo(t testing.TB, index string, chart []byte) *HelmRepo {
	t.Helper()
	r := &HelmRepo{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.URL.Path == "/index.yaml":
			_, _ = w.Write([]byte(index))
		case strings.HasSuffix(req.URL.Path, ".tgz"):
			r.downloads.Add(1)
			_, _ = w.Write(chart)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}
