package oci

import (
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// pingTTL is how long a registry's answer to the API check is reused.
const pingTTL = time.Minute

// pingCache answers go-containerregistry's registry check, GET /v2/ without
// credentials, which it sends before every operation, from the answer the
// same transport had for the same scheme and host within pingTTL: a 200 (no
// authentication) or a 401 with its challenge (the token request that
// follows still goes to the registry), or, for https, a server that spoke
// plain HTTP (go-containerregistry then falls back to http at once). A
// fleet's clusters push to one registry, so an unchanged cluster costs the
// registry one manifest read instead of a check and a read. Other answers
// and errors are not kept.
type pingCache struct {
	base http.RoundTripper
	now  func() time.Time

	mu      sync.Mutex
	answers map[string]pingAnswer // by scheme://host
}

type pingAnswer struct {
	status int
	header http.Header
	err    error
	at     time.Time
}

func newPingCache(base http.RoundTripper) *pingCache {
	return &pingCache{base: base, now: time.Now, answers: map[string]pingAnswer{}}
}

// isPing reports whether r is go-containerregistry's registry check.
func isPing(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/v2/" && r.URL.RawQuery == "" && r.Header.Get("Authorization") == ""
}

func (c *pingCache) RoundTrip(r *http.Request) (*http.Response, error) {
	if !isPing(r) {
		return c.base.RoundTrip(r)
	}
	key := r.URL.Scheme + "://" + r.URL.Host
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && c.now().Sub(a.at) < pingTTL {
		if a.err != nil {
			return nil, a.err
		}
		return &http.Response{
			Status: http.StatusText(a.status), StatusCode: a.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: a.header.Clone(), Body: http.NoBody, ContentLength: 0, Request: r,
		}, nil
	}
	resp, err := c.base.RoundTrip(r)
	var rhe tls.RecordHeaderError
	switch {
	case err != nil && r.URL.Scheme == "https" && errors.As(err, &rhe) && strings.HasPrefix(string(rhe.RecordHeader[:]), "HTTP"):
		c.keep(key, pingAnswer{err: err})
	case err == nil && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized):
		// The body is read through and closed by the caller, keeping the
		// connection; the answer is its status and headers.
		c.keep(key, pingAnswer{status: resp.StatusCode, header: resp.Header.Clone()})
	}
	return resp, err
}

func (c *pingCache) keep(key string, a pingAnswer) {
	a.at = c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers[key] = a
}
