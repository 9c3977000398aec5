package oci_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestInsecureRegistry pins what the README says of plain HTTP: a
// registry on loopback (or a private address) that does not speak HTTPS is
// reached over plain HTTP without WithInsecure (go-containerregistry's
// rule); any other host only with it. The other host here is a name that
// the test's transport dials to the same plain-HTTP registry on 127.0.0.1.
func TestInsecureRegistry(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, port, err := net.SplitHostPort(reg.Host)
	require.NoError(t, err)
	dialer := &net.Dialer{}
	toRegistry := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, reg.Host)
	}}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	remoteHost := "registry.example.com:" + port

	for _, tt := range []struct {
		name, host string
		opts       []oci.PushOption
		wantErr    string
	}{
		{"loopback, no flag", reg.Host, nil, ""},
		{"localhost, no flag", "localhost:" + port, nil, ""},
		{"another host, no flag", remoteHost, []oci.PushOption{oci.WithTransport(toRegistry), oci.WithRetry(fastRetry)}, "server gave HTTP response to HTTPS client"},
		{"another host, WithInsecure", remoteHost, []oci.PushOption{oci.WithTransport(toRegistry), oci.WithInsecure()}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := "oci://" + tt.host + "/acme/" + strings.ToLower(strings.NewReplacer(" ", "-", ",", "").Replace(tt.name)) + ":v1"
			_, err := oci.Push(t.Context(), dir, url, tt.opts...)
			if tt.wantErr == "" {
				assert.NoError(t, err, "push to %s", url)
				return
			}
			require.Error(t, err, "push to %s", url)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
