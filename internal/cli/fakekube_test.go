package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeKube is the part of a kube-apiserver fluxpack status and wait read:
// legacy discovery, and LIST and WATCH of Kustomizations and
// OCIRepositories in flux-system. A watch sends nothing and stays open
// until the client leaves. It counts the requests by verb and path.
type fakeKube struct {
	mu       sync.Mutex
	objects  map[string][]map[string]any // resource -> items
	requests []string
	// modified are sent, as MODIFIED events, on each watch of
	// Kustomizations as it starts.
	modified []map[string]any
}

// startFakeKube serves objects (each a Kustomization or an OCIRepository)
// on 127.0.0.1 and returns a kubeconfig file reaching it.
func startFakeKube(t *testing.T, objects ...map[string]any) (*fakeKube, string) {
	t.Helper()
	fk := &fakeKube{objects: map[string][]map[string]any{}}
	for _, o := range objects {
		res := "kustomizations"
		if o["kind"] == "OCIRepository" {
			res = "ocirepositories"
		}
		fk.objects[res] = append(fk.objects[res], o)
	}
	srv := httptest.NewServer(fk)
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %s
users:
- name: fake
  user:
    token: fake
contexts:
- name: fake
  context:
    cluster: fake
    user: fake
current-context: fake
`, srv.URL), 0o600))
	return fk, kubeconfig
}

func (fk *fakeKube) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	watching := r.URL.Query().Get("watch") == "true"
	fk.mu.Lock()
	verb := "GET"
	if watching {
		verb = "WATCH"
	}
	fk.requests = append(fk.requests, verb+" "+r.URL.Path)
	fk.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	groups := map[string]string{"kustomize.toolkit.fluxcd.io": "kustomizations", "source.toolkit.fluxcd.io": "ocirepositories"}
	kinds := map[string]string{"kustomizations": "Kustomization", "ocirepositories": "OCIRepository"}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/api":
		reply(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case path == "/api/v1":
		reply(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{}})
	case path == "/apis":
		var list []any
		for g := range groups {
			gv := map[string]any{"groupVersion": g + "/v1", "version": "v1"}
			list = append(list, map[string]any{"name": g, "versions": []any{gv}, "preferredVersion": gv})
		}
		reply(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": list})
	default:
		parts := strings.Split(strings.TrimPrefix(path, "/apis/"), "/")
		res, ok := groups[parts[0]]
		if !ok || len(parts) < 2 {
			http.NotFound(w, r)
			return
		}
		if len(parts) == 2 {
			reply(map[string]any{"kind": "APIResourceList", "groupVersion": parts[0] + "/v1", "resources": []any{
				map[string]any{"name": res, "kind": kinds[res], "namespaced": true, "verbs": []string{"list", "watch"}},
			}})
			return
		}
		if parts[len(parts)-1] != res {
			http.NotFound(w, r)
			return
		}
		if watching {
			w.WriteHeader(http.StatusOK)
			if res == "kustomizations" {
				fk.mu.Lock()
				events := fk.modified
				fk.mu.Unlock()
				for _, o := range events {
					reply(map[string]any{"type": "MODIFIED", "object": o})
				}
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		fk.mu.Lock()
		items := fk.objects[res]
		fk.mu.Unlock()
		if items == nil {
			items = []map[string]any{}
		}
		reply(map[string]any{"kind": kinds[res] + "List", "apiVersion": parts[0] + "/v1", "metadata": map[string]any{"resourceVersion": "7"}, "items": items})
	}
}

// Requests are the requests served, "GET /path" or "WATCH /path".
func (fk *fakeKube) Requests() []string {
	fk.mu.Lock()
	defer fk.mu.Unlock()
	return append([]string(nil), fk.requests...)
}

const fakeRevision = "main@sha256:1111111111111111111111111111111111111111111111111111111111111111"

// fluxObject is a Kustomization (or the OCIRepository platform, for name
// "platform" of kind OCIRepository) with a Ready condition and status
// fields.
func fluxObject(kind, name string, deps []string, ready, reason, message string, extra map[string]any) map[string]any {
	apiVersion := "kustomize.toolkit.fluxcd.io/v1"
	spec := map[string]any{"sourceRef": map[string]any{"kind": "OCIRepository", "name": "platform"}}
	if kind == "OCIRepository" {
		apiVersion, spec = "source.toolkit.fluxcd.io/v1", map[string]any{}
	}
	var dependsOn []any
	for _, d := range deps {
		dependsOn = append(dependsOn, map[string]any{"name": d})
	}
	if dependsOn != nil {
		spec["dependsOn"] = dependsOn
	}
	st := map[string]any{"observedGeneration": 1, "conditions": []any{
		map[string]any{"type": "Ready", "status": ready, "reason": reason, "message": message, "lastTransitionTime": "2026-01-02T03:04:05Z"},
	}}
	for k, v := range extra {
		if k == "suspend" {
			spec[k] = v
			continue
		}
		if k == "conditions" {
			st[k] = append(st[k].([]any), v.([]any)...)
			continue
		}
		st[k] = v
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "flux-system", "generation": 1, "resourceVersion": "5"},
		"spec":     spec, "status": st}
}

func readySource() map[string]any {
	return fluxObject("OCIRepository", "platform", nil, "True", "Succeeded", "stored artifact", map[string]any{"artifact": map[string]any{"revision": fakeRevision}})
}

func readyLayer(name string, deps ...string) map[string]any {
	return fluxObject("Kustomization", name, deps, "True", "ReconciliationSucceeded", "Applied revision: "+fakeRevision,
		map[string]any{"lastAppliedRevision": fakeRevision, "lastAttemptedRevision": fakeRevision})
}
