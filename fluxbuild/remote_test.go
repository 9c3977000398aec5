package fluxbuild

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoteFilesAreNotFetched: kustomize downloads every http(s) URL a
// kustomization names as a file (a generator's source, a patch, ...), not
// only remote resources. A build refuses each with ErrRemote, naming the
// kustomization file and the URL, and never asks the server. Found on a
// public repository whose flux-system folder generates its Grafana
// dashboards from raw.githubusercontent.com URLs.
func TestRemoteFilesAreNotFetched(t *testing.T) {
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		_, _ = w.Write([]byte("a: b\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/file.json"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	cases := map[string]string{
		"configMapGenerator file with a key": "configMapGenerator:\n- name: dash\n  files: [dash.json=" + url + "]\n",
		"configMapGenerator file":            "configMapGenerator:\n- name: dash\n  files: ['" + url + "']\n",
		"secretGenerator env":                "secretGenerator:\n- name: s\n  envs: ['" + url + "']\n",
		"patch":                              "resources: [cm.yaml]\npatches:\n- path: " + url + "\n",
		"replacement":                        "resources: [cm.yaml]\nreplacements:\n- path: " + url + "\n",
		"transformer":                        "resources: [cm.yaml]\ntransformers: ['" + url + "']\n",
	}
	for name, kus := range cases {
		t.Run(name, func(t *testing.T) {
			root := cacheTree(t, t.TempDir(), map[string]string{
				"app/kustomization.yaml":    cacheKus + kus,
				"app/cm.yaml":               cm,
				"nested/kustomization.yaml": cacheKus + "resources: [../app]\n",
			})
			for _, path := range []string{"./app", "./nested"} {
				_, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: path}})
				require.ErrorIs(t, err, ErrRemote, path)
				require.ErrorIs(t, err, ErrRemoteFile, path)
				assert.Contains(t, err.Error(), "app/kustomization.yaml: ", path)
				assert.Contains(t, err.Error(), url, path)
			}
		})
	}
	assert.Zero(t, asked.Load(), "the server was asked")

	// A URL that is a label's or annotation's value is no file.
	root := cacheTree(t, t.TempDir(), map[string]string{
		"app/kustomization.yaml": cacheKus + "resources: [cm.yaml]\ncommonAnnotations:\n  link: " + url + "\nconfigMapGenerator:\n- name: c\n  literals: [url=" + url + "]\n",
		"app/cm.yaml":            cm,
	})
	objs, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}})
	require.NoError(t, err)
	assert.Len(t, objs, 2)
}
