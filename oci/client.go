package oci

import (
	"fmt"
	"net/http"
	"sync"
)

// Client reaches registries. It owns what calls to the same registries
// share, as go-containerregistry's remote.Pusher does: the HTTP transports
// (one per TLS setting, so successive calls, a fleet's pushes say, reuse
// their connections instead of each leaving its own idle), the answers to
// go-containerregistry's registry check (GET /v2/, kept a minute), and the
// options it was made with (credentials, TLS, retries, logging), which
// every call applies before its own. A Client is safe for concurrent use;
// the zero Client has no options and works.
//
// The package-level functions (Push, Pull, …) are conveniences over a
// Client of their own, made for the one call; a program making several
// calls makes one Client and reuses it.
type Client struct {
	base *options // NewClient's options; nil for the zero Client

	mu         sync.Mutex
	transports map[transportKey]*http.Transport
	pings      map[*http.Transport]*pingCache
}

// NewClient returns a Client whose every call applies opts first: the
// registry options (WithCreds, WithKeychain, WithCAFile, WithInsecure,
// WithTransport, WithRetry, WithRemoteOptions), WithLogger and
// WithEnvironment. They are checked (and a CA file read) now.
func NewClient(opts ...RegistryOption) (*Client, error) {
	o, err := collect(nil, opts, func(x RegistryOption, o *options) error { return x.applyPull(o) })
	if err != nil {
		return nil, fmt.Errorf("making a registry client: %w", err)
	}
	o.fromEnv = false // applied: each call's own WithEnvironment reads it again
	return &Client{base: o}, nil
}

// transport returns the client's transport for key, built by build once.
func (c *Client) transport(key transportKey, build func(transportKey) *http.Transport) *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[key]; ok {
		return t
	}
	if c.transports == nil {
		c.transports = map[transportKey]*http.Transport{}
	}
	t := build(key)
	c.transports[key] = t
	return t
}

// pingsOf returns the client's pingCache over its transport t.
func (c *Client) pingsOf(t *http.Transport) *pingCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.pings[t]; ok {
		return p
	}
	if c.pings == nil {
		c.pings = map[*http.Transport]*pingCache{}
	}
	p := newPingCache(t)
	c.pings[t] = p
	return p
}
