package release_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/release"
)

// The archive is the same bytes for the same binary, and holds it alone,
// executable, owned by no one, dated the epoch.
func TestArchiveReproducible(t *testing.T) {
	exe := bytes.Repeat([]byte("\x7fELF fluxpack "), 1000)
	a, err := release.Archive(release.BinaryName, exe)
	require.NoError(t, err)
	b, err := release.Archive(release.BinaryName, exe)
	require.NoError(t, err)
	require.Equal(t, a, b)

	zr, err := gzip.NewReader(bytes.NewReader(a))
	require.NoError(t, err)
	require.Empty(t, zr.Name)
	require.True(t, zr.ModTime.IsZero(), "gzip header time %v", zr.ModTime)
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	require.NoError(t, err)
	require.Equal(t, "flux-pack", hdr.Name)
	require.Equal(t, int64(0o755), hdr.Mode)
	require.Equal(t, byte(tar.TypeReg), hdr.Typeflag)
	require.Zero(t, hdr.Uid)
	require.Zero(t, hdr.Gid)
	require.Empty(t, hdr.Uname)
	require.True(t, hdr.ModTime.Equal(time.Unix(0, 0)), "mtime %v", hdr.ModTime)
	got, err := io.ReadAll(tr)
	require.NoError(t, err)
	require.Equal(t, exe, got)
	_, err = tr.Next()
	require.ErrorIs(t, err, io.EOF)
}

// The manifest is in the flux CLI's schema: the name `flux plugin install`
// takes, the bin it installs, the version without "v", one URL and
// "sha256:<hex>" checksum per platform.
func TestManifest(t *testing.T) {
	arts := []release.Artifact{
		{Platform: release.Platform{OS: "linux", Arch: "amd64"}, Name: release.ArchiveName("v1.2.3", release.Platform{OS: "linux", Arch: "amd64"}), SHA256: "ab"},
		{Platform: release.Platform{OS: "darwin", Arch: "arm64"}, Name: release.ArchiveName("v1.2.3", release.Platform{OS: "darwin", Arch: "arm64"}), SHA256: "cd"},
	}
	b, err := release.Marshal(release.NewManifest("v1.2.3", "https://example.com/dl/v1.2.3/", arts))
	require.NoError(t, err)
	require.Equal(t, `apiVersion: cli.fluxcd.io/v1beta1
kind: Plugin
name: pack
description: Race-free Flux layers from a bootstrap order, linted, rendered and shipped as OCI artifacts
homepage: https://github.com/fluxpack/fluxpack
source: https://github.com/fluxpack/fluxpack
bin: flux-pack
versions:
  - version: 1.2.3
    platforms:
      - os: linux
        arch: amd64
        url: https://example.com/dl/v1.2.3/flux-pack_1.2.3_linux_amd64.tar.gz
        checksum: sha256:ab
      - os: darwin
        arch: arm64
        url: https://example.com/dl/v1.2.3/flux-pack_1.2.3_darwin_arm64.tar.gz
        checksum: sha256:cd
`, string(b))
}
