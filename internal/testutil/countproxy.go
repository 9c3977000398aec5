package testutil

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// RequestKind is what a registry request does, as CountingProxy sorts them.
type RequestKind string

// The kinds of registry requests.
const (
	ReqPing         RequestKind = "ping"          // GET /v2/ (the auth check)
	ReqManifestGET  RequestKind = "manifest-GET"  // by tag or digest
	ReqManifestHEAD RequestKind = "manifest-HEAD" // by tag or digest
	ReqTagPUT       RequestKind = "tag-PUT"       // a manifest PUT by tag: the tag moves
	ReqDigestPUT    RequestKind = "digest-PUT"    // a manifest PUT by digest
	ReqBlobHEAD     RequestKind = "blob-HEAD"
	ReqBlobGET      RequestKind = "blob-GET"
	ReqBlobUpload   RequestKind = "blob-upload" // POST, PATCH or PUT under /blobs/uploads/
	ReqOther        RequestKind = "other"
)

// RequestKinds lists every RequestKind, in the order reports use.
var RequestKinds = []RequestKind{ReqPing, ReqManifestGET, ReqManifestHEAD, ReqTagPUT, ReqDigestPUT, ReqBlobHEAD, ReqBlobGET, ReqBlobUpload, ReqOther}

// RequestCounts counts requests by kind.
type RequestCounts map[RequestKind]int

// Total is the number of requests of every kind.
func (c RequestCounts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String lists the kinds seen, in RequestKinds' order: "ping=3 manifest-GET=3".
func (c RequestCounts) String() string {
	var parts []string
	for _, k := range RequestKinds {
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
		}
	}
	return strings.Join(parts, " ")
}

// ClassifyRequest says what a request to a registry's /v2/ API does.
func ClassifyRequest(method, path string) RequestKind {
	if path == "/v2/" || path == "/v2" {
		return ReqPing
	}
	switch {
	case strings.Contains(path, "/blobs/uploads"):
		if method != http.MethodGet {
			return ReqBlobUpload
		}
	case strings.Contains(path, "/blobs/"):
		switch method {
		case http.MethodHead:
			return ReqBlobHEAD
		case http.MethodGet:
			return ReqBlobGET
		}
	case strings.Contains(path, "/manifests/"):
		ref := path[strings.LastIndex(path, "/manifests/")+len("/manifests/"):]
		switch method {
		case http.MethodGet:
			return ReqManifestGET
		case http.MethodHead:
			return ReqManifestHEAD
		case http.MethodPut:
			if strings.Contains(ref, ":") {
				return ReqDigestPUT
			}
			return ReqTagPUT
		}
	}
	return ReqOther
}

// CountingProxy is a reverse proxy on 127.0.0.1 in front of a registry
// (plain HTTP) that counts the requests it passes on, by kind: how many
// requests a push really costs at a real registry server. The test's
// cleanup stops it.
type CountingProxy struct {
	// Host is 127.0.0.1:port of the proxy.
	Host string

	mu     sync.Mutex
	counts RequestCounts
	others []string
}

// NewCountingProxy starts a CountingProxy in front of upstream (host:port).
func NewCountingProxy(t testing.TB, upstream string) *CountingProxy {
	t.Helper()
	p := &CountingProxy{counts: RequestCounts{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: upstream})
	rp.ErrorLog = log.New(io.Discard, "", 0)
	// As many idle connections to the registry as clients may hold to the
	// proxy, so the proxy does not add connection setups of its own.
	rp.Transport = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := ClassifyRequest(r.Method, r.URL.Path)
		p.mu.Lock()
		p.counts[k]++
		if k == ReqOther && len(p.others) < 100 {
			p.others = append(p.others, r.Method+" "+r.URL.Path)
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(s.Close)
	p.Host = strings.TrimPrefix(s.URL, "http://")
	return p
}

// Counts returns the requests passed on since the start or the last Reset,
// by kind.
func (p *CountingProxy) Counts() RequestCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(RequestCounts, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Others returns "METHOD /path" of the first requests of kind ReqOther.
func (p *CountingProxy) Others() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.others)
}

// Reset forgets the requests counted so far.
func (p *CountingProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts = RequestCounts{}
	p.others = nil
}
