package oci

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// Calls of one Client with the same TLS settings share one transport, so a
// fleet's pushes reuse their connections; other settings, and other
// clients, get transports of their own.
func TestSharedTransport(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	testutil.WriteSelfSignedCA(t, ca)
	client := new(Client)
	build := func(opts ...PushOption) *http.Transport {
		t.Helper()
		o, err := collect(client, opts, func(x PushOption, o *options) error { return x.applyPush(o) })
		require.NoError(t, err)
		rt, ok := o.baseTransport().(retryAfter)
		require.True(t, ok, "baseTransport() = %T, want retryAfter", o.baseTransport())
		if pc, ok := rt.base.(*pingCache); ok {
			tr, ok := pc.base.(*http.Transport)
			require.True(t, ok, "pingCache.base = %T, want *http.Transport", pc.base)
			assert.Same(t, pc, client.pingsOf(tr), "one pingCache per shared transport")
			return tr
		}
		tr, ok := rt.base.(*http.Transport)
		require.True(t, ok, "retryAfter.base = %T, want *pingCache or *http.Transport", rt.base)
		return tr
	}
	def := build()
	assert.Same(t, def, build(), "two default calls")
	other := client
	client = new(Client)
	assert.NotSame(t, def, build(), "two clients")
	client = other
	assert.Equal(t, ResponseHeaderTimeout, def.ResponseHeaderTimeout)

	insecure := build(WithInsecure())
	assert.Same(t, insecure, build(WithInsecure()), "two WithInsecure calls")
	assert.NotSame(t, def, insecure)
	assert.True(t, insecure.TLSClientConfig.InsecureSkipVerify)
	assert.True(t, def.TLSClientConfig == nil || !def.TLSClientConfig.InsecureSkipVerify, "the default transport skips TLS verification")

	withCA := build(WithCAFile(ca))
	assert.Same(t, withCA, build(WithCAFile(ca)), "two WithCAFile calls, one file")
	assert.NotSame(t, def, withCA)
	assert.NotNil(t, withCA.TLSClientConfig.RootCAs)

	mine := &http.Transport{}
	assert.Same(t, mine, build(WithTransport(mine)), "WithTransport without TLS options is used as it is")
	tlsMine := build(WithTransport(mine), WithInsecure())
	assert.NotSame(t, mine, tlsMine, "the caller's transport was changed")
	assert.Same(t, tlsMine, build(WithTransport(mine), WithInsecure()))
	assert.True(t, mine.TLSClientConfig == nil || !mine.TLSClientConfig.InsecureSkipVerify, "WithInsecure changed the caller's transport")
}
