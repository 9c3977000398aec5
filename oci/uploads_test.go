package oci_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// interruptUpload pushes platformFiles to the registry at host, behind
// tracker, and cancels the push's context (as SIGINT cancels the CLI's)
// once the registry holds its blob uploads in progress. It returns the
// push's error.
func interruptUpload(t *testing.T, host string, tracker *testutil.UploadTracker) error {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	held := tracker.HoldPatches()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pushed := make(chan error, 1)
	go func() {
		_, err := oci.Push(ctx, dir, "oci://"+host+"/acme/platform:v1", oci.WithRevision("main@sha1:1"))
		pushed <- err
	}()
	// Both blobs (config and layer) are uploaded at once: once both
	// PATCHes are held, both sessions are open.
	for range 2 {
		select {
		case <-held:
		case err := <-pushed:
			t.Fatalf("the push ended before uploading its two blobs: %v", err)
		}
	}
	cancel()
	return <-pushed
}

// TestInterruptedPushCancelsUploads: a push interrupted while it uploads a
// blob cancels each upload session it opened on the registry (DELETE
// /v2/<name>/blobs/uploads/<id>) before it returns: go-containerregistry
// gives them up without a word, and the registry would keep the partial
// uploads.
func TestInterruptedPushCancelsUploads(t *testing.T) {
	tracker := testutil.NewUploadTracker(t, registry.New(registry.Logger(log.New(io.Discard, "", 0))), true)
	s := httptest.NewServer(tracker)
	t.Cleanup(s.Close)

	err := interruptUpload(t, strings.TrimPrefix(s.URL, "http://"), tracker)
	require.ErrorIs(t, err, context.Canceled)
	assert.Positive(t, tracker.Cancelled(), "sessions cancelled")
	assert.Empty(t, tracker.Open(), "upload sessions the interrupted push left open on the registry")
}

// TestRetriedUploadCancelsTheFailedSession: a blob upload whose PATCH
// fails is retried by go-containerregistry with a new session; the failed
// one is cancelled, and the push succeeds with no session left open.
func TestRetriedUploadCancelsTheFailedSession(t *testing.T) {
	var failed atomic.Bool
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	failFirstPatch := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && failed.CompareAndSwap(false, true) {
			_, _ = io.Copy(io.Discard, r.Body)
			http.Error(w, "injected", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	})
	tracker := testutil.NewUploadTracker(t, failFirstPatch, true)
	s := httptest.NewServer(tracker)
	t.Cleanup(s.Close)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)

	_, err := oci.Push(t.Context(), dir, "oci://"+strings.TrimPrefix(s.URL, "http://")+"/acme/platform:v1", oci.WithRetry(quickRetry))
	require.NoError(t, err)
	require.True(t, failed.Load(), "a PATCH failed")
	assert.Equal(t, 1, tracker.Cancelled(), "the failed session is cancelled")
	assert.Empty(t, tracker.Open(), "upload sessions left open on the registry")
}

// TestInterruptedPushLeavesNoUploadInRealRegistry interrupts a push to
// CNCF distribution while it uploads its blobs: the registry's storage
// keeps no upload's data or start time (distribution's _uploads/<id>/data
// and startedat; a session left so is purged only after a week). What
// distribution itself writes back after a cancel, a hash state of a few
// bytes (_uploads/<id>/hashstates, distribution/distribution#4524), is
// left out.
func TestInterruptedPushLeavesNoUploadInRealRegistry(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: reg.Host})
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	tracker := testutil.NewUploadTracker(t, proxy, false)
	s := httptest.NewServer(tracker)
	t.Cleanup(s.Close)

	err := interruptUpload(t, strings.TrimPrefix(s.URL, "http://"), tracker)
	require.ErrorIs(t, err, context.Canceled)
	assert.Positive(t, tracker.Cancelled(), "sessions cancelled")
	assert.Empty(t, tracker.Open(), "upload sessions the interrupted push left open")
	uploads := filepath.Join(reg.Dir, "storage", "docker", "registry", "v2", "repositories", "acme", "platform", "_uploads")
	var left []string
	err = filepath.WalkDir(uploads, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "hashstates":
			return filepath.SkipDir
		case !d.IsDir():
			rel, _ := filepath.Rel(uploads, p)
			left = append(left, rel)
		}
		return nil
	})
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	assert.Empty(t, left, "upload files left in %s", uploads)
}
