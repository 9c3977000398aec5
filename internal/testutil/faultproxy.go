package testutil

import (
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is a kind of failure the FaultProxy injects.
type Fault string

// The faults a FaultProxy injects.
const (
	// Fault5xx answers 500, 502 or 503 without asking the registry.
	Fault5xx Fault = "5xx"
	// FaultReset drops the connection mid-body: halfway through the
	// request's body for uploads, halfway through the registry's response
	// otherwise.
	FaultReset Fault = "reset"
	// FaultStall holds the request for the proxy's Stall, past the client's
	// per-request deadline, then drops it.
	FaultStall Fault = "stall"
	// Fault429 answers 429 Too Many Requests with a Retry-After.
	Fault429 Fault = "429"
)

// AllFaults lists every Fault.
var AllFaults = []Fault{Fault5xx, FaultReset, FaultStall, Fault429}

// FaultConfig sets up a FaultProxy.
type FaultConfig struct {
	// Seed makes the faults repeatable: whether a request gets a fault, and
	// which, depends on the seed, the request (method, repository path,
	// the blob it is about) and how many times the same request came
	// before, not on the order in which concurrent requests arrive. Only
	// which of several concurrent callers makes the n-th of identical
	// requests (a registry ping, say) can vary between runs.
	Seed uint64
	// Rate is the probability that a request gets a fault.
	Rate float64
	// Faults are the kinds to draw from; AllFaults when empty.
	Faults []Fault
	// Stall is how long FaultStall holds a request (default 2s).
	Stall time.Duration
	// RetryAfter is the Retry-After of Fault429, in seconds (default 1).
	RetryAfter int
}

// FaultProxy is a reverse proxy on 127.0.0.1 in front of a registry that
// injects faults at a seeded rate. Its server is stopped by the test's
// cleanup.
type FaultProxy struct {
	// Host is 127.0.0.1:port of the proxy.
	Host string

	cfg      FaultConfig
	mu       sync.Mutex
	seen     map[string]int    // how many times each request identity came
	uploads  map[string]string // upload location path → the blob it uploads
	injected map[Fault]int
	requests int
	log      []FaultEvent
}

// FaultEvent records one request the proxy saw.
type FaultEvent struct {
	Time   time.Time
	Method string
	Path   string
	Fault  Fault // "" when the request went through
}

// NewFaultProxy starts a proxy in front of the registry at upstream
// (host:port, plain HTTP).
func NewFaultProxy(t testing.TB, upstream string, cfg FaultConfig) *FaultProxy {
	t.Helper()
	if len(cfg.Faults) == 0 {
		cfg.Faults = AllFaults
	}
	if cfg.Stall == 0 {
		cfg.Stall = 2 * time.Second
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = 1
	}
	p := &FaultProxy{cfg: cfg, seen: map[string]int{}, uploads: map[string]string{}, injected: map[Fault]int{}}
	target := &url.URL{Scheme: "http", Host: upstream}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = p.noteUpload
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault, rng := p.draw(r)
		switch fault {
		case "":
			rp.ServeHTTP(w, r)
		case Fault5xx:
			code := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[rng.IntN(3)]
			http.Error(w, "injected fault", code)
		case Fault429:
			w.Header().Set("Retry-After", fmt.Sprint(p.cfg.RetryAfter))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"errors":[{"code":"TOOMANYREQUESTS","message":"injected rate limit"}]}`)
		case FaultStall:
			select {
			case <-time.After(p.cfg.Stall):
			case <-r.Context().Done():
			}
			panic(http.ErrAbortHandler)
		case FaultReset:
			if r.ContentLength > 1 || r.Method == http.MethodPatch || r.Method == http.MethodPut {
				// Read part of the upload, then drop the connection.
				io.CopyN(io.Discard, r.Body, max(r.ContentLength/2, 1))
				panic(http.ErrAbortHandler)
			}
			rp.ServeHTTP(&halfWriter{ResponseWriter: w}, r)
			panic(http.ErrAbortHandler)
		}
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(s.Close)
	p.Host = strings.TrimPrefix(s.URL, "http://")
	return p
}

// draw decides r's fault, from the seed, r's identity and how many times
// that identity came before, and returns a generator for the fault's
// details drawn from the same.
func (p *FaultProxy) draw(r *http.Request) (Fault, *rand.Rand) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests++
	id := p.identity(r)
	n := p.seen[id]
	p.seen[id] = n + 1
	h := fnv.New64a()
	fmt.Fprintf(h, "%s#%d", id, n)
	rng := rand.New(rand.NewPCG(p.cfg.Seed, h.Sum64()))
	var f Fault
	if rng.Float64() < p.cfg.Rate {
		f = p.cfg.Faults[rng.IntN(len(p.cfg.Faults))]
		p.injected[f]++
	}
	p.log = append(p.log, FaultEvent{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Fault: f})
	return f, rng
}

// identity names what r asks for independently of the registry's random
// upload locations: the method and path, with an upload location replaced
// by the blob it uploads (the mount digest of the POST that opened it),
// and the digest a blob upload or commit names. Called with p.mu held.
func (p *FaultProxy) identity(r *http.Request) string {
	path := r.URL.Path
	if blob, ok := p.uploads[path]; ok {
		path = "upload of " + blob
	}
	q := r.URL.Query()
	return strings.Join([]string{r.Method, path, q.Get("mount"), q.Get("digest")}, " ")
}

// noteUpload records which blob an upload location opened by a POST with
// ?mount= is for, so that the location's PATCH and PUT have an identity
// that does not depend on the registry's random upload id.
func (p *FaultProxy) noteUpload(resp *http.Response) error {
	r := resp.Request
	mount := r.URL.Query().Get("mount")
	loc := resp.Header.Get("Location")
	if r.Method != http.MethodPost || mount == "" || loc == "" {
		return nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil //nolint:nilerr // not an upload location: the client will say
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uploads[u.Path] = r.URL.Path + " " + mount
	return nil
}

// Injected returns how many faults of each kind were injected.
func (p *FaultProxy) Injected() map[Fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Fault]int, len(p.injected))
	for k, v := range p.injected {
		out[k] = v
	}
	return out
}

// Requests returns how many requests the proxy saw.
func (p *FaultProxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Events returns what the proxy saw, in order.
func (p *FaultProxy) Events() []FaultEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]FaultEvent(nil), p.log...)
}

// halfWriter passes on the headers and the first half of a response body
// that announces its length, then stops writing.
type halfWriter struct {
	http.ResponseWriter
	budget  int64
	started bool
}

func (h *halfWriter) WriteHeader(code int) {
	if n := h.Header().Get("Content-Length"); n != "" {
		var total int64
		fmt.Sscan(n, &total)
		h.budget = total / 2
	}
	h.started = true
	h.ResponseWriter.WriteHeader(code)
}

func (h *halfWriter) Write(b []byte) (int, error) {
	if !h.started {
		h.WriteHeader(http.StatusOK)
	}
	if h.budget <= 0 {
		return 0, io.ErrClosedPipe
	}
	k := min(int64(len(b)), h.budget)
	h.budget -= k
	n, err := h.ResponseWriter.Write(b[:k])
	if err == nil && k < int64(len(b)) {
		err = io.ErrClosedPipe
	}
	return n, err
}
