package oci_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// flakyRegistry serves an in-process registry that fails the first request
// of each kind with fail (then behaves).
func flakyRegistry(t *testing.T, fail func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

var quickRetry = remote.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Steps: 4}

func TestPushRetries(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	tests := []struct {
		name string
		fail func(w http.ResponseWriter, r *http.Request) bool
	}{
		{name: "503 on every first upload and manifest", fail: onceEach(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet {
				return false
			}
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return true
		})},
		{name: "connection dropped mid-body", fail: onceEach(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method != http.MethodPatch && r.Method != http.MethodPut {
				return false
			}
			_, _ = io.CopyN(io.Discard, r.Body, 10)
			hj, ok := w.(http.Hijacker)
			require.True(t, ok)
			c, _, err := hj.Hijack()
			require.NoError(t, err)
			c.Close()
			return true
		})},
		{name: "429 too many requests", fail: onceEach(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet {
				return false
			}
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}`, http.StatusTooManyRequests)
			return true
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := flakyRegistry(t, tt.fail)
			res, err := oci.Push(t.Context(), dir, "oci://"+host+"/platform:v1", oci.WithRetry(quickRetry))
			require.NoError(t, err)
			assert.True(t, res.Pushed)
			assert.Equal(t, res.Digest, tagDigest(t, host+"/platform:v1"))
		})
	}
}

// onceEach fails the first request of each method and path kind.
func onceEach(fail func(w http.ResponseWriter, r *http.Request) bool) func(w http.ResponseWriter, r *http.Request) bool {
	var seen stringSet
	return func(w http.ResponseWriter, r *http.Request) bool {
		key := r.Method + " " + kind(r.URL.Path)
		if seen.add(key) {
			return fail(w, r)
		}
		return false
	}
}

func kind(path string) string {
	for _, k := range []string{"/blobs/uploads", "/blobs/", "/manifests/"} {
		if strings.Contains(path, k) {
			return k
		}
	}
	return path
}

func TestPushDeadline(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	var stalled atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	host := flakyRegistry(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return false
		}
		stalled.Add(1)
		select { // a registry that hangs on uploads
		case <-release:
		case <-r.Context().Done():
		}
		return true
	})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := oci.Push(ctx, dir, "oci://"+host+"/platform:v1")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "want a deadline error, got %v", err)
	assert.Positive(t, stalled.Load())
	_, err = remote.Head(mustTag(t, host+"/platform:v1"), remote.WithContext(t.Context()))
	assert.Error(t, err, "no tag after a push that timed out")
}

func TestPushProgress(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	var last atomic.Pointer[oci.Progress]
	_, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1", oci.WithProgress(func(p oci.Progress) { last.Store(&p) }))
	require.NoError(t, err)
	require.Eventually(t, func() bool { p := last.Load(); return p != nil && p.Total > 0 && p.Written == p.Total }, 5*time.Second, 10*time.Millisecond)
}

// WithRetry checks its backoff, and NewClient says which option was bad.
func TestWithRetryValidates(t *testing.T) {
	for _, b := range []remote.Backoff{
		{Steps: 0, Duration: time.Second, Factor: 2},
		{Steps: 3, Duration: 0, Factor: 2},
		{Steps: 3, Duration: time.Second, Factor: 0.5},
		{Steps: 3, Duration: time.Second, Factor: 2, Jitter: -1},
		{Steps: 3, Duration: time.Second, Factor: 2, Cap: time.Millisecond},
	} {
		_, err := oci.NewClient(oci.WithRetry(b))
		require.Error(t, err, "%+v", b)
		assert.ErrorContains(t, err, "WithRetry")
	}
	_, err := oci.NewClient(oci.WithRetry(oci.DefaultRetry()))
	require.NoError(t, err)
}
