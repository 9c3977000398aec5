package oci_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// countingTransport counts the requests that upload blobs.
type countingTransport struct {
	base        http.RoundTripper
	blobUploads atomic.Int64
	manifestPut atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/blobs/uploads") {
		c.blobUploads.Add(1)
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
		c.manifestPut.Add(1)
	}
	return c.base.RoundTrip(r)
}

func TestRealRegistry(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/acme/platform:v1"
	ct := &countingTransport{base: remote.DefaultTransport}

	first, err := oci.Push(t.Context(), dir, url, oci.WithTransport(ct), oci.WithRevision("main@sha1:1"))
	require.NoError(t, err)
	require.True(t, first.Pushed)
	assert.Positive(t, ct.blobUploads.Load())

	ct.blobUploads.Store(0)
	ct.manifestPut.Store(0)
	again, err := oci.Push(t.Context(), dir, url, oci.WithTransport(ct), oci.WithRevision("main@sha1:2"))
	require.NoError(t, err)
	assert.False(t, again.Pushed)
	assert.Zero(t, ct.blobUploads.Load(), "unchanged push uploads no blob")
	assert.Zero(t, ct.manifestPut.Load(), "unchanged push does not move the tag")
	assert.Equal(t, first.Digest, again.Digest)

	// Flux's own client pulls what fluxpack pushed, to the identical tree.
	out := t.TempDir()
	meta, err := fluxoci.NewClient(nil).Pull(t.Context(), reg.Host+"/acme/platform:v1", out)
	require.NoError(t, err)
	assert.Equal(t, first.Ref(), meta.Digest)
	assert.Equal(t, platformFiles, testutil.ReadFiles(t, out))

	// And fluxpack pulls what Flux pushed.
	fluxRef, err := fluxoci.NewClient(nil).Push(t.Context(), reg.Host+"/acme/by-flux:v1", dir, fluxoci.WithPushMetadata(fluxoci.Metadata{Source: "s", Revision: "r"}))
	require.NoError(t, err)
	pulled := filepath.Join(t.TempDir(), "p")
	md, err := oci.Pull(t.Context(), "oci://"+reg.Host+"/acme/by-flux:v1", pulled)
	require.NoError(t, err)
	assert.Equal(t, fluxRef, md.Digest)
	assert.Equal(t, platformFiles, testutil.ReadFiles(t, pulled))

	d, err := oci.Diff(t.Context(), dir, url)
	require.NoError(t, err)
	assert.Equal(t, oci.Identical, d.Status)

	tagged, err := oci.Tag(t.Context(), url, []string{"stable"})
	require.NoError(t, err)
	assert.Equal(t, first.Digest, tagged.Digest)
	tags, err := oci.List(t.Context(), "oci://"+reg.Host+"/acme/platform")
	require.NoError(t, err)
	require.Len(t, tags, 2)
	assert.Equal(t, "v1", tags[0].Tag)
	assert.Equal(t, "stable", tags[1].Tag)
	assert.Equal(t, first.Digest, tags[1].Digest)
	_, err = oci.List(t.Context(), "oci://"+reg.Host+"/acme/big")
	require.ErrorIs(t, err, oci.ErrNoRepository, "distribution's NAME_UNKNOWN")
}

func TestRealRegistryTLSAndAuth(t *testing.T) {
	const user, password = "ci-bot", "s3cr3t-Pa55"
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{TLS: true, Users: map[string]string{user: password}})
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/acme/platform:v1"
	wrongCA := filepath.Join(t.TempDir(), "wrong-ca.pem")
	testutil.WriteSelfSignedCA(t, wrongCA)

	// An empty docker config, so the default keychain holds nothing.
	emptyCfg := t.TempDir()
	t.Setenv("DOCKER_CONFIG", emptyCfg)

	t.Run("creds and CA file", func(t *testing.T) {
		res, err := oci.Push(t.Context(), dir, url, oci.WithCreds(user+":"+password), oci.WithCAFile(reg.CAFile))
		require.NoError(t, err)
		assert.True(t, res.Pushed)
	})
	t.Run("docker config keychain", func(t *testing.T) {
		cfgDir := t.TempDir()
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.json"), fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, auth), 0o600))
		t.Setenv("DOCKER_CONFIG", cfgDir)
		d, err := oci.Diff(t.Context(), dir, url, oci.WithCAFile(reg.CAFile))
		require.NoError(t, err)
		assert.Equal(t, oci.Identical, d.Status)
	})
	t.Run("insecure skips verification", func(t *testing.T) {
		tags, err := oci.List(t.Context(), "oci://"+reg.Host+"/acme/platform", oci.WithCreds(user+":"+password), oci.WithInsecure())
		require.NoError(t, err)
		require.Len(t, tags, 1)
	})

	failures := []struct {
		name string
		opts []oci.RegistryOption
		want string
	}{
		{name: "TLS verified by default", opts: []oci.RegistryOption{oci.WithCreds(user + ":" + password)}, want: "certificate signed by unknown authority"},
		{name: "wrong CA", opts: []oci.RegistryOption{oci.WithCreds(user + ":" + password), oci.WithCAFile(wrongCA)}, want: "certificate signed by unknown authority"},
		{name: "no credentials", opts: []oci.RegistryOption{oci.WithCAFile(reg.CAFile)}, want: "UNAUTHORIZED"},
		{name: "wrong password", opts: []oci.RegistryOption{oci.WithCreds(user + ":not-" + password), oci.WithCAFile(reg.CAFile)}, want: "UNAUTHORIZED"},
	}
	other := t.TempDir()
	testutil.WriteFiles(t, other, map[string]string{"x.yaml": "kind: ConfigMap\n"})
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			opts := []oci.PushOption{oci.WithRetry(fastRetry)}
			for _, o := range tt.opts {
				opts = append(opts, o)
			}
			_, err := oci.Push(t.Context(), other, url, opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "pushing "+other+" to "+url)
			assert.NotContains(t, err.Error(), password)
		})
	}
	// None of the failures moved the tag.
	d, err := crane.Digest(reg.Host+"/acme/platform:v1", crane.WithAuth(authFor(user, password)), crane.Insecure)
	require.NoError(t, err)
	res, err := oci.Diff(t.Context(), dir, url, oci.WithCreds(user+":"+password), oci.WithCAFile(reg.CAFile))
	require.NoError(t, err)
	assert.Equal(t, d, res.Digest)
	assert.Equal(t, oci.Identical, res.Status)
}
