package oci_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

func TestWithLoggerLogsRequestsNotCredentials(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	url := "oci://" + reg.Host + "/platform:v1"
	_, err := oci.Push(t.Context(), dir, url, oci.WithLogger(log), oci.WithCreds("ci:hunter2"))
	require.NoError(t, err)
	_, err = oci.Pull(t.Context(), url, filepath.Join(t.TempDir(), "out"), oci.WithLogger(log), oci.WithCreds("ci:hunter2"))
	require.NoError(t, err)

	got := buf.String()
	assert.Contains(t, got, `msg="registry request" method=PUT url=http://`+reg.Host+"/v2/platform/manifests/v1")
	assert.Contains(t, got, "status=201")
	assert.NotContains(t, got, "hunter2")
	assert.NotContains(t, got, "Y2k6aHVudGVyMg", "base64 of the credentials")
	assert.NotContains(t, got, "?", "URL queries are left out")

	_, err = oci.List(t.Context(), "oci://"+reg.Host+"/platform", oci.WithLogger(nil))
	require.ErrorIs(t, err, oci.ErrInvalidOption)
}
