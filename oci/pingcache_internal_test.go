package oci

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The registry check is answered from memory for a minute, per scheme and
// host; every other request, a check with credentials, and answers other
// than 200 and 401 go to the registry.
func TestPingCache(t *testing.T) {
	var pings, others, conns atomic.Int64
	status := atomic.Int64{}
	status.Store(http.StatusUnauthorized)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			others.Add(1)
			return
		}
		pings.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://auth.example.com/token",service="registry"`)
		w.WriteHeader(int(status.Load()))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	now := time.Unix(1000, 0)
	c := newPingCache(http.DefaultTransport.(*http.Transport).Clone())
	c.now = func() time.Time { return now }
	get := func(url string, auth bool) (*http.Response, error) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		if auth {
			req.Header.Set("Authorization", "Basic eDp5")
		}
		resp, err := c.RoundTrip(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	for range 3 {
		resp, err := get(srv.URL+"/v2/", false)
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `realm="https://auth.example.com/token"`, "the challenge comes back with the kept answer")
	}
	assert.Equal(t, int64(1), pings.Load(), "three checks, one reached the registry")
	for range 2 {
		_, err := get(srv.URL+"/v2/platform/manifests/v1", false)
		require.NoError(t, err)
		_, err = get(srv.URL+"/v2/", true)
		require.NoError(t, err)
	}
	assert.Equal(t, int64(2), others.Load(), "other requests are never answered from memory")
	assert.Equal(t, int64(3), pings.Load(), "a check with credentials is never answered from memory")

	now = now.Add(pingTTL)
	_, err := get(srv.URL+"/v2/", false)
	require.NoError(t, err)
	assert.Equal(t, int64(4), pings.Load(), "a kept answer lasts pingTTL")

	// A 5xx is not kept.
	status.Store(http.StatusServiceUnavailable)
	now = now.Add(pingTTL)
	for range 2 {
		resp, err := get(srv.URL+"/v2/", false)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	assert.Equal(t, int64(6), pings.Load(), "a 503 was kept")

	// https to a registry that speaks plain HTTP: the failure is kept, so
	// the next check falls back to http without a TLS handshake.
	https := "https://" + strings.TrimPrefix(srv.URL, "http://") + "/v2/"
	before := conns.Load()
	_, err = get(https, false)
	require.Error(t, err)
	_, err = get(https, false)
	require.Error(t, err)
	assert.Equal(t, before+1, conns.Load(), "the second https check dialled the plain-HTTP registry again")
}
