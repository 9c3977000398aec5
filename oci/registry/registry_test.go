package registry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/registry"
)

var tree = map[string]string{
	"apps/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
	"apps/config.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: apps\ndata:\n  k: v\n",
}

var meta = []oci.PushOption{oci.WithSource("https://example.com/platform.git"), oci.WithRevision("main@sha1:0123456789abcdef0123456789abcdef01234567")}

// serve starts a registry on 127.0.0.1:0 with opts and returns it; the
// test's cleanup stops it, if stop has not, and checks Serve's answer.
// stop stops it as an interrupt would (its context done) and returns
// what Serve returned.
func serve(t *testing.T, opts ...registry.Option) (s *registry.Server, stop func() error) {
	t.Helper()
	s, err := registry.Listen(append([]registry.Option{registry.WithAddr("127.0.0.1:0")}, opts...)...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	var stopped atomic.Bool
	var result error
	stop = func() error {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			result = <-served
		}
		return result
	}
	t.Cleanup(func() { assert.NoError(t, stop(), "Serve") })
	return s, stop
}

// uploads counts the blob uploads (POST …/blobs/uploads/) a push opens.
type uploads struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (u *uploads) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/blobs/uploads/") {
		u.n.Add(1)
	}
	return u.base.RoundTrip(r)
}

// TestServePushPull pushes a tree to a registry on a free loopback port,
// pulls it back, and stops the registry as an interrupt does: Serve
// returns nil, and the port answers no more.
func TestServePushPull(t *testing.T) {
	s, stop := serve(t)
	require.True(t, strings.HasPrefix(s.Addr(), "127.0.0.1:"), s.Addr())
	assert.NotEqual(t, "127.0.0.1:0", s.Addr(), "Addr is the port bound")
	assert.Empty(t, s.Dir())

	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)
	url := "oci://" + s.Addr() + "/platform:v1"
	res, err := oci.Push(t.Context(), dir, url, meta...)
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	out := filepath.Join(t.TempDir(), "out")
	md, err := oci.Pull(t.Context(), url, out)
	require.NoError(t, err)
	assert.Equal(t, res.Ref(), md.Digest)
	assert.Equal(t, tree, testutil.ReadFiles(t, out))

	require.NoError(t, stop(), "Serve, stopped by its context")
	_, err = net.Dial("tcp", s.Addr())
	assert.Error(t, err, "the registry still listens after Serve returned")
}

// TestServeDirOutlivesServer: with WithDir the blobs are files in the
// folder, and a registry started again on it has them: a push of the same
// tree uploads none. Its tags, in memory, are gone.
func TestServeDirOutlivesServer(t *testing.T) {
	blobs := filepath.Join(t.TempDir(), "blobs") // made by Listen
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, tree)

	first, stop := serve(t, registry.WithDir(blobs))
	assert.Equal(t, blobs, first.Dir())
	count := &uploads{base: http.DefaultTransport}
	res, err := oci.Push(t.Context(), dir, "oci://"+first.Addr()+"/platform:v1", append(meta, oci.WithTransport(count))...)
	require.NoError(t, err)
	require.Equal(t, int64(2), count.n.Load(), "the first push uploads the config and the layer")
	desc, err := remote.Get(mustRef(t, res.Ref()))
	require.NoError(t, err)
	m, err := desc.Image()
	require.NoError(t, err)
	manifest, err := m.Manifest()
	require.NoError(t, err)
	for _, d := range append(manifest.Layers, manifest.Config) {
		assert.FileExists(t, filepath.Join(blobs, d.Digest.Algorithm, d.Digest.Hex), "blob %s on disk", d.Digest)
	}
	require.NoError(t, stop())

	again, _ := serve(t, registry.WithDir(blobs))
	_, err = oci.Pull(t.Context(), "oci://"+again.Addr()+"/platform:v1", filepath.Join(t.TempDir(), "out"))
	assert.Error(t, err, "tags are in memory: the restarted registry has none")
	count.n.Store(0)
	res2, err := oci.Push(t.Context(), dir, "oci://"+again.Addr()+"/platform:v1", append(meta, oci.WithTransport(count))...)
	require.NoError(t, err)
	assert.Equal(t, res.Digest, res2.Digest)
	assert.Zero(t, count.n.Load(), "a push after the restart uploads no blob the folder holds")
	out := filepath.Join(t.TempDir(), "out")
	_, err = oci.Pull(t.Context(), "oci://"+again.Addr()+"/platform:v1", out)
	require.NoError(t, err)
	assert.Equal(t, tree, testutil.ReadFiles(t, out))
}

// TestListenRefuses: an address off loopback without WithAllowRemote, and
// options it cannot use; every bad option is reported.
func TestListenRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []registry.Option
		want error
		msg  []string
	}{
		{"every interface", []registry.Option{registry.WithAddr(":0")}, registry.ErrNotLoopback, []string{"every interface is not a loopback address", "WithAllowRemote"}},
		{"unspecified IPv4", []registry.Option{registry.WithAddr("0.0.0.0:0")}, registry.ErrNotLoopback, []string{"0.0.0.0 is not a loopback address"}},
		{"unspecified IPv6", []registry.Option{registry.WithAddr("[::]:0")}, registry.ErrNotLoopback, []string{":: is not a loopback address"}},
		{"a host name", []registry.Option{registry.WithAddr("registry.example.com:5000")}, registry.ErrNotLoopback, []string{"registry.example.com is not a loopback address"}},
		{"a private IP", []registry.Option{registry.WithAddr("192.168.1.10:5000")}, registry.ErrNotLoopback, []string{"192.168.1.10"}},
		{"no port", []registry.Option{registry.WithAddr("127.0.0.1")}, registry.ErrInvalidOption, []string{`WithAddr: "127.0.0.1": want host:port`}},
		{"bad port", []registry.Option{registry.WithAddr("127.0.0.1:99999"), registry.WithDir("")}, registry.ErrInvalidOption, []string{"want a port number", "WithDir: empty path"}},
		{"nil logger", []registry.Option{registry.WithLogger(nil)}, registry.ErrInvalidOption, []string{"WithLogger: nil logger"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := registry.Listen(tt.opts...)
			if s != nil {
				s.Close()
			}
			require.ErrorIs(t, err, tt.want, "Listen(%s)", tt.name)
			for _, m := range tt.msg {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

// TestListenAllowRemote: WithAllowRemote lifts the loopback check, so
// Listen goes on to bind, here an address of TEST-NET-1 (RFC 5737) that no
// machine has: the error is the bind's.
func TestListenAllowRemote(t *testing.T) {
	s, err := registry.Listen(registry.WithAddr("192.0.2.1:0"), registry.WithAllowRemote())
	if err == nil {
		s.Close()
		t.Skip("this machine has 192.0.2.1")
	}
	assert.NotErrorIs(t, err, registry.ErrNotLoopback)
	var op *net.OpError
	assert.True(t, errors.As(err, &op), "a bind error: %v", err)
}

// TestListenLocalhost: "localhost" is loopback.
func TestListenLocalhost(t *testing.T) {
	s, err := registry.Listen(registry.WithAddr("localhost:0"))
	require.NoError(t, err)
	defer s.Close()
	host, _, err := net.SplitHostPort(s.Addr())
	require.NoError(t, err)
	assert.True(t, net.ParseIP(host).IsLoopback(), s.Addr())
}

// TestServeAfterClose: Close stops a server that serves, and one that does
// not yet; Serve then returns nil.
func TestServeAfterClose(t *testing.T) {
	s, err := registry.Listen(registry.WithAddr("127.0.0.1:0"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.NoError(t, s.Serve(t.Context()))
	_, err = net.Dial("tcp", s.Addr())
	assert.Error(t, err, "the registry still listens after Close")
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s)
	require.NoError(t, err)
	return ref
}
