package testutil

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is an in-process OCI registry (go-containerregistry's
// pkg/registry) on 127.0.0.1, with its blobs in a temp dir. It counts the
// requests it serves so tests can prove that a push sent nothing.
type Registry struct {
	// Host is host:port, without a scheme.
	Host string

	mu       sync.Mutex
	requests []string
	blobPuts atomic.Int64
}

// NewRegistry starts a Registry that the test's cleanup stops. opts come
// after the Registry's own, e.g. registry.WithReferrersSupport(true) for a
// registry with the referrers API (without it, clients fall back to the
// sha256-<hex> tag schema).
func NewRegistry(t testing.TB, opts ...registry.Option) *Registry {
	t.Helper()
	r := &Registry{}
	h := registry.New(append([]registry.Option{
		registry.WithBlobHandler(registry.NewDiskBlobHandler(t.TempDir())),
		registry.Logger(log.New(io.Discard, "", 0)),
	}, opts...)...)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		if strings.Contains(req.URL.Path, "/blobs/uploads") && req.Method != http.MethodGet {
			r.blobPuts.Add(1)
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	r.Host = strings.TrimPrefix(s.URL, "http://")
	return r
}

// Requests returns "METHOD /path" for every request served so far.
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// Reset forgets the requests served so far.
func (r *Registry) Reset() {
	r.mu.Lock()
	r.requests = nil
	r.mu.Unlock()
	r.blobPuts.Store(0)
}

// BlobUploads counts the blob upload requests (POST/PATCH/PUT on
// /v2/…/blobs/uploads/) served since the last Reset.
func (r *Registry) BlobUploads() int64 { return r.blobPuts.Load() }
