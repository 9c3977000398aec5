package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// maxRetryAfter caps how long a Retry-After can hold one request.
const maxRetryAfter = time.Minute

// retryAfter is the innermost transport under go-containerregistry's retry,
// and mends two gaps in it (which go-containerregistry should close itself):
//
//   - It honours a registry's Retry-After on 429 and 503 answers, waiting
//     that long (at most maxRetryAfter, never past the request's context)
//     before handing the answer on; the retry only knows its own backoff.
//   - A request that timed out waiting for the registry's answer (a stalled
//     registry) is retried while the caller's context lives: net/http's
//     timeout error matches context.DeadlineExceeded, which the retry
//     otherwise takes for the caller's own deadline.
type retryAfter struct{ base http.RoundTripper }

// attemptTimeout is one request's timeout, retryable.
type attemptTimeout struct{ err error }

func (e *attemptTimeout) Error() string   { return e.err.Error() }
func (e *attemptTimeout) Timeout() bool   { return true }
func (e *attemptTimeout) Temporary() bool { return true }

func (t retryAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		var ne net.Error
		if r.Context().Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return nil, &attemptTimeout{err}
		}
		return nil, err
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return resp, nil
	}
	d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if !ok || d <= 0 {
		return resp, nil
	}
	timer := time.NewTimer(min(d, maxRetryAfter))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
	}
	return resp, nil
}

// parseRetryAfter reads a Retry-After value: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s > int(maxRetryAfter/time.Second) { // and no overflow
			return maxRetryAfter, true
		}
		return time.Duration(s) * time.Second, s >= 0
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// guard runs fn, the network part of an operation, and returns when it ends
// or soon after ctx does. go-containerregistry sleeps between retries
// without watching the context, so without the guard an operation could
// outlive its deadline by a backoff step. Once ctx is done every request fn
// makes fails at once, so fn writes nothing after guard returns; guard
// waits up to guardGrace for it to end, so that its cleanup (temporary
// files, partial directories) is done when guard returns.
func guard[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		// fn sees ctx too: give it a moment to end and clean up (a spooled
		// layer, a pull's partial directory, uploads cancelled), so that a
		// caller exiting on an interrupt leaves nothing behind; a request
		// that ignores ctx is not waited for longer.
		select {
		case r := <-done:
			if r.err == nil {
				return r.v, nil
			}
		case <-time.After(guardGrace):
		}
		var zero T
		return zero, fmt.Errorf("giving up: %w", context.Cause(ctx))
	}
}

// guardGrace is how long guard waits, once its context is done, for the
// work to end and clean up.
const guardGrace = 3 * time.Second

// retryable decides which failed requests go-containerregistry tries again:
// what its default predicate retries (temporary errors, dropped and reset
// connections) plus registry answers 408, 429 and 5xx even when their body
// is not an OCI error, as proxies and load balancers send them. Its default
// predicate leaves those to the transport, which does not retry inside a
// blob upload.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return te.Temporary()
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) && tmp.Temporary() && !errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// logTransport logs each request for WithLogger, without headers, bodies or
// the URL's query and user information.
type logTransport struct {
	base http.RoundTripper
	log  *slog.Logger
}

func (t logTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.base.RoundTrip(r)
	u := url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: r.URL.Path}
	attrs := []any{"method", r.Method, "url", u.String(), "took", time.Since(start).Round(time.Millisecond)}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its message holds the whole URL
			err = ue.Err
		}
		t.log.Debug("registry request failed", append(attrs, "error", err)...)
		return nil, err
	}
	t.log.Debug("registry request", append(attrs, "status", resp.StatusCode)...)
	return resp, nil
}
