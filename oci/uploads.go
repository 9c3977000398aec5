package oci

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cancelUploadTimeout bounds the DELETE that cancels an upload session:
// under guardGrace, so that an interrupted operation has cancelled its
// sessions when guard returns.
const cancelUploadTimeout = 2 * time.Second

// uploadSessions follows the blob upload sessions one operation opens
// (POST …/blobs/uploads/ answered 202 with a Location) through the PATCH
// that sends the bytes and the PUT that commits them, and cancels a session
// (DELETE at its last Location, the distribution API's way to give up an
// upload) as soon as a request in it fails: an interrupt or a deadline
// (the request's context done), a dropped connection, an error answer.
// go-containerregistry never resumes such a session (it retries the whole
// upload with a new one, or gives up) and never tells the registry, whose
// storage would keep the partial upload until its own purge (CNCF
// distribution's _uploads: after a week). A 401 is not a failure: go-containerregistry's
// token transport, around this one, sends the same request again with a
// fresh token.
//
// The DELETE goes to the registry with the failed request's Authorization
// (the session's URL is the request's, so the same host), on a context
// that outlives the operation's by at most cancelUploadTimeout. It is best
// effort: a registry that refuses it (a token without the delete scope,
// go-containerregistry's registry, which has no such endpoint) keeps the
// session, as before. A session whose POST was interrupted before its
// answer came back cannot be cancelled: its Location is not known.
type uploadSessions struct {
	base http.RoundTripper

	mu   sync.Mutex
	open map[string]string // sessionKey → the Location the registry last gave
}

func newUploadSessions(base http.RoundTripper) *uploadSessions {
	return &uploadSessions{base: base, open: map[string]string{}}
}

func (u *uploadSessions) RoundTrip(r *http.Request) (*http.Response, error) {
	var key, loc string
	if r.Method == http.MethodPatch || r.Method == http.MethodPut {
		key = sessionKey(r.URL)
		u.mu.Lock()
		loc = u.open[key]
		u.mu.Unlock()
	}
	resp, err := u.base.RoundTrip(r)
	if loc == "" { // not in a session this operation opened
		if err == nil && r.Method == http.MethodPost && resp.StatusCode == http.StatusAccepted && strings.HasSuffix(r.URL.Path, "/blobs/uploads/") {
			if next := nextLocation(r, resp); next != nil {
				u.set("", next)
			}
		}
		return resp, err
	}
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		return resp, err // sent again, with a fresh token, by the token transport
	}
	var next *url.URL
	if err == nil {
		next = nextLocation(r, resp)
	}
	switch {
	case err == nil && r.Method == http.MethodPatch && resp.StatusCode/100 == 2 && next != nil:
		u.set(key, next) // the session's next request goes there
	case err == nil && r.Method == http.MethodPut && resp.StatusCode == http.StatusCreated:
		u.set(key, nil) // committed
	default:
		u.set(key, nil)
		u.cancel(r, loc)
	}
	return resp, err
}

// set forgets the session at key ("": none) and, unless next is nil,
// records it at next.
func (u *uploadSessions) set(key string, next *url.URL) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.open, key)
	if next != nil {
		u.open[sessionKey(next)] = next.String()
	}
}

// cancel sends DELETE loc for the failed request r of the session.
func (u *uploadSessions) cancel(r *http.Request, loc string) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(r.Context()), cancelUploadTimeout)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, loc, nil)
	if err != nil {
		return
	}
	for _, h := range []string{"Authorization", "User-Agent"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := u.base.RoundTrip(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// nextLocation is resp's Location resolved against r's URL, as
// go-containerregistry resolves it, or nil.
func nextLocation(r *http.Request, resp *http.Response) *url.URL {
	l := resp.Header.Get("Location")
	if l == "" {
		return nil
	}
	u, err := url.Parse(l)
	if err != nil {
		return nil
	}
	return r.URL.ResolveReference(u)
}

// sessionKey names the session a URL belongs to: the URL without the
// digest go-containerregistry adds to the committing PUT, its query in
// canonical order.
func sessionKey(u *url.URL) string {
	q := u.Query()
	q.Del("digest")
	k := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: q.Encode()}
	return k.String()
}
