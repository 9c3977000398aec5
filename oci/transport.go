package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// maxRetryAfter caps how long a Retry-After can hold one request.
const maxRetryAfter = time.Minute

// retryAfter is the innermost transport under go-containerregistry's retry,
// and mends three gaps in it (which go-containerregistry should close itself):
//
//   - Inside a blob upload go-containerregistry does not retry single
//     requests: it retries the whole upload (HEAD, POST, PATCH, PUT), so one
//     fault in any of four requests costs an attempt, and at a 20 % fault
//     rate five attempts are not enough for every blob of a fleet.
//     retryAfter retries, with the client's backoff (at most
//     maxInnerTries tries, jittered, never past the request's context), the
//     upload's requests it is safe to send again: the blob's HEAD and the
//     bodiless POST that opens the upload, on a dropped connection or a
//     408, 429 or 5xx answer; the bodiless PUT that commits it only on such
//     an answer (a dropped commit may have been committed; the upload's own
//     retry finds out with its HEAD). Bodies are never re-sent. Other
//     requests (GETs, manifests) go through go-containerregistry's retry
//     alone, so that a registry that keeps failing is not asked
//     steps × maxInnerTries times.
//
//   - It honours a registry's Retry-After on 429 and 503 answers, waiting
//     that long (at most maxRetryAfter, never past the request's context)
//     before handing the answer on; the retry only knows its own backoff.
//
//   - A request that timed out waiting for the registry's answer (a stalled
//     registry) is retried while the caller's context lives: net/http's
//     timeout error matches context.DeadlineExceeded, which the retry
//     otherwise takes for the caller's own deadline.
type retryAfter struct {
	base    http.RoundTripper
	backoff remote.Backoff // the client's (WithRetry), for requests retried here
}

// maxInnerTries bounds retryAfter's own tries of one request; go-containerregistry's
// retry (of the request, or of the whole upload) runs around them.
const maxInnerTries = 4

// attemptTimeout is one request's timeout, retryable.
type attemptTimeout struct{ err error }

func (e *attemptTimeout) Error() string   { return e.err.Error() }
func (e *attemptTimeout) Timeout() bool   { return true }
func (e *attemptTimeout) Temporary() bool { return true }

func (t retryAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	tries := min(max(t.backoff.Steps, 1), maxInnerTries)
	onError, onStatus := resendable(r)
	if !onStatus {
		tries = 1
	}
	delay := t.backoff.Duration
	for try := 1; ; try++ {
		resp, err := t.once(r)
		last := try >= tries || r.Context().Err() != nil
		switch {
		case err != nil && (last || !onError || !retryable(err)):
			return nil, err
		case err == nil && (last || !transientStatus(resp.StatusCode)):
			return resp, nil
		case err == nil:
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
				if _, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
					continue // once has waited as long as the registry asked
				}
			}
		}
		if !sleep(r.Context(), jitter(delay, t.backoff.Jitter)) {
			return nil, context.Cause(r.Context())
		}
		if t.backoff.Factor > 1 {
			delay = time.Duration(float64(delay) * t.backoff.Factor)
		}
	}
}

// resendable says whether retryAfter may send r again after an error, and
// after a transient answer.
func resendable(r *http.Request) (onError, onStatus bool) {
	bodiless := r.Body == nil || r.Body == http.NoBody
	switch {
	case r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/blobs/"):
		return true, true
	case r.Method == http.MethodPost && bodiless && strings.HasSuffix(r.URL.Path, "/blobs/uploads/"):
		return true, true
	case r.Method == http.MethodPut && bodiless && strings.Contains(r.URL.Path, "/blobs/uploads/"):
		return false, true
	}
	return false, false
}

// transientStatus reports the answers worth asking again.
func transientStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// jitter adds up to f·d at random to d, as go-containerregistry's backoff does.
func jitter(d time.Duration, f float64) time.Duration {
	if f <= 0 {
		return d
	}
	return d + time.Duration(rand.Float64()*f*float64(d)) //nolint:gosec // spreads retries, not a secret
}

// sleep waits d, or until ctx is done (false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// once sends r, and waits out a 429 or 503's Retry-After before handing
// the answer on.
func (t retryAfter) once(r *http.Request) (*http.Response, error) {
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
	sleep(r.Context(), min(d, maxRetryAfter))
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
// run is every Client call: the options collected and checked together
// (check may be nil), then fn under guard; every error is prefixed with
// what ("pushing DIR to REF").
func run[O, R any](ctx context.Context, c *Client, what string, opts []O, apply func(O, *options) error, check func(*options) error, fn func(*options) (R, error)) (R, error) {
	var res R
	o, err := collect(c, opts, apply)
	if err == nil && check != nil {
		err = check(o)
	}
	if err == nil {
		res, err = guard(ctx, func() (R, error) { return fn(o) })
	}
	if err != nil {
		var zero R
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return res, nil
}

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
