package testutil

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// UploadTracker is an http.Handler in front of a registry (next) that
// follows the blob upload sessions clients open (POST …/blobs/uploads/
// answered 202 with a Location), commit (PUT answered 201) and cancel
// (DELETE of the session, the distribution API's way to give an upload up),
// so a test can tell which sessions a client left open on the registry.
type UploadTracker struct {
	next http.Handler
	// answerDeletes: next cannot cancel a session (go-containerregistry's
	// registry answers a DELETE of one 400), so the tracker answers it.
	answerDeletes bool
	done          chan struct{} // closed by the test's cleanup

	mu        sync.Mutex
	open      map[string]bool // session paths
	cancelled int
	hold      bool
	held      chan struct{}
}

// NewUploadTracker returns a tracker in front of next. With answerDeletes
// it answers a DELETE of a session it knows itself (204), for a next that
// cannot (go-containerregistry's registry); else it passes it on and counts
// the session cancelled when next answers 2xx (CNCF distribution).
func NewUploadTracker(t testing.TB, next http.Handler, answerDeletes bool) *UploadTracker {
	t.Helper()
	u := &UploadTracker{next: next, answerDeletes: answerDeletes, done: make(chan struct{}), open: map[string]bool{}, held: make(chan struct{}, 64)}
	t.Cleanup(func() { close(u.done) })
	return u
}

// HoldPatches makes the tracker hold every PATCH (the upload of a blob's
// bytes) from now on: it reads the body, does not pass the request on, and
// waits until the client goes away or the test ends. The channel it returns
// gets a value for each PATCH held: a test cancels the client once as many
// as it opened sessions are held, at the same moment on every run.
func (u *UploadTracker) HoldPatches() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.hold = true
	return u.held
}

// Open returns the paths of the sessions opened and neither committed nor
// cancelled.
func (u *UploadTracker) Open() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.open))
	for p := range u.open {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Cancelled counts the sessions cancelled with DELETE.
func (u *UploadTracker) Cancelled() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cancelled
}

func (u *UploadTracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	inUpload := strings.Contains(r.URL.Path, "/blobs/uploads/")
	switch {
	case inUpload && r.Method == http.MethodPatch:
		u.mu.Lock()
		hold := u.hold
		u.mu.Unlock()
		if hold {
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case u.held <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
			case <-u.done:
			}
			http.Error(w, "held", http.StatusServiceUnavailable)
			return
		}
	case inUpload && r.Method == http.MethodDelete && u.answerDeletes:
		u.mu.Lock()
		known := u.open[r.URL.Path]
		if known {
			delete(u.open, r.URL.Path)
			u.cancelled++
		}
		u.mu.Unlock()
		if !known {
			http.Error(w, `{"errors":[{"code":"BLOB_UPLOAD_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	u.next.ServeHTTP(rec, r)
	if !inUpload {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && rec.status == http.StatusAccepted:
		if loc, err := url.Parse(w.Header().Get("Location")); err == nil {
			u.open[r.URL.ResolveReference(loc).Path] = true
		}
	case r.Method == http.MethodPatch && rec.status/100 == 2:
		if loc, err := url.Parse(w.Header().Get("Location")); err == nil && r.URL.ResolveReference(loc).Path != r.URL.Path {
			delete(u.open, r.URL.Path) // the session moved (not seen from distribution or go-containerregistry)
			u.open[r.URL.ResolveReference(loc).Path] = true
		}
	case r.Method == http.MethodPut && rec.status == http.StatusCreated:
		delete(u.open, r.URL.Path)
	case r.Method == http.MethodDelete && rec.status/100 == 2:
		if u.open[r.URL.Path] {
			delete(u.open, r.URL.Path)
			u.cancelled++
		}
	}
}

// statusRecorder records the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}
