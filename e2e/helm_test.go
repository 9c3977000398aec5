//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigyaml "sigs.k8s.io/yaml"
)

// Chart is a test chart pushed to a cluster's registry as an OCI chart.
type Chart struct {
	Name    string
	Version string
	// URL is the repository, oci://HOST/charts/NAME; the tag is Version.
	URL string
	// Digest is the manifest digest Helm's registry client pushed.
	Digest string
}

// pushChart packages the chart folder dir and pushes it to the cluster's
// registry the way `helm package` and `helm push` do, with Helm's own Go SDK
// (loader, packager, registry client over plain HTTP), to
// oci://HOST/charts/<name>:<version>.
func pushChart(t *testing.T, c *Cluster, dir string) Chart {
	t.Helper()
	ch, err := loader.LoadDir(dir)
	require.NoError(t, err, "loading the chart %s", dir)
	out := t.TempDir()
	tgz, err := chartutil.Save(ch, out)
	require.NoError(t, err, "packaging the chart %s", dir)
	data, err := os.ReadFile(tgz)
	require.NoError(t, err)
	// A credentials file of its own: the test reads no one's Helm config.
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP(),
		registry.ClientOptCredentialsFile(filepath.Join(out, "registry.json")))
	require.NoError(t, err)
	repo := fmt.Sprintf("%s/charts/%s", c.Registry.Host, ch.Name())
	res, err := rc.Push(data, repo+":"+ch.Metadata.Version)
	require.NoError(t, err, "pushing the chart %s to %s", dir, repo)
	return Chart{Name: ch.Name(), Version: ch.Metadata.Version, URL: "oci://" + repo, Digest: res.Manifest.Digest}
}

// Source is the OCIRepository a HelmRelease's chartRef names: the chart's
// tag, and only its chart layer, copied as the .tgz helm-controller loads.
func (ch Chart) Source() *sourcev1.OCIRepository {
	return &sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: ch.Name, Namespace: fluxNamespace},
		Spec: sourcev1.OCIRepositorySpec{
			URL:           ch.URL,
			Reference:     &sourcev1.OCIRepositoryRef{Tag: ch.Version},
			LayerSelector: &sourcev1.OCILayerSelector{MediaType: registry.ChartLayerMediaType, Operation: sourcev1.OCILayerCopy},
			Interval:      &metav1.Duration{Duration: 10 * time.Minute},
			Insecure:      true, // plain HTTP on loopback
		},
	}
}

// Ref is the chartRef of a HelmRelease installing the chart from Source.
func (ch Chart) Ref() helmv2.CrossNamespaceSourceReference {
	return helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: ch.Name, Namespace: fluxNamespace}
}

// manifest is obj as a file of a Flux source tree: YAML without status or
// creationTimestamp, as `flux create … --export` writes it.
func manifest(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	b, err := sigyaml.Marshal(u)
	require.NoError(t, err)
	return b
}

// HelmRepository is a classic Helm chart repository (index.yaml and the
// charts' .tgz files, as `helm package` and `helm repo index` write them)
// served by the test over HTTP on 127.0.0.1.
type HelmRepository struct {
	// URL is http://127.0.0.1:PORT, the repository's root.
	URL string

	mu     sync.Mutex
	served map[string]int // by path, for successful GETs
}

// serveHelmRepository packages the chart folders with Helm's loader and
// packager, indexes them with Helm's repo package and serves the result until
// the test ends.
func serveHelmRepository(t *testing.T, dirs ...string) *HelmRepository {
	t.Helper()
	root := t.TempDir()
	for _, dir := range dirs {
		ch, err := loader.LoadDir(dir)
		require.NoError(t, err, "loading the chart %s", dir)
		_, err = chartutil.Save(ch, root)
		require.NoError(t, err, "packaging the chart %s", dir)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &HelmRepository{URL: "http://" + l.Addr().String(), served: map[string]int{}}
	idx, err := repo.IndexDirectory(root, r.URL)
	require.NoError(t, err, "indexing %s", root)
	idx.SortEntries()
	require.NoError(t, idx.WriteFile(filepath.Join(root, "index.yaml"), 0o644))

	files := http.FileServer(http.Dir(root))
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		files.ServeHTTP(rec, req)
		if req.Method == http.MethodGet && rec.status == http.StatusOK {
			r.mu.Lock()
			r.served[path.Clean(req.URL.Path)]++
			r.mu.Unlock()
		}
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// Served is how many times the file at path (say /index.yaml) was served.
func (r *HelmRepository) Served(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served[path]
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
