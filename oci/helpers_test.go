package oci_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/tar"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/oci"
)

// extract unpacks an artifact's layer into dir with Flux's own untar.
func extract(art *oci.Artifact, dir string) error {
	layers, err := art.Image.Layers()
	if err != nil {
		return err
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	return tar.Untar(rc, dir)
}

// listTree lists the files under dir, and its empty directories with a
// trailing slash.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			des, err := os.ReadDir(p)
			if err == nil && len(des) == 0 {
				out = append(out, rel+"/")
			}
			return err
		}
		out = append(out, rel)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// fastRetry keeps tests of unreachable registries short.
var fastRetry = remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 1}

func authFor(user, password string) authn.Authenticator {
	return authn.FromConfig(authn.AuthConfig{Username: user, Password: password})
}

// stringSet is a set of strings safe for concurrent use.
type stringSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// add adds k and reports whether it was new.
func (s *stringSet) add(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	if s.m[k] {
		return false
	}
	s.m[k] = true
	return true
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s)
	require.NoError(t, err)
	return tag
}

// encodedArtifact is art with its tar stream compressed by compress instead
// of fluxpack's compressor, assembled as fluxcd/pkg/oci and oci.Build
// assemble it (same config, media types and annotations), with the content
// digest annotation on the layer only when annotate is set: what another
// tool, or an older fluxpack, would have pushed for the same tree.
func encodedArtifact(t *testing.T, art *oci.Artifact, compress func(io.Writer) io.WriteCloser, annotate bool) v1.Image {
	t.Helper()
	layers, err := art.Image.Layers()
	require.NoError(t, err)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	stream, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	var gz bytes.Buffer
	w := compress(&gz)
	_, err = w.Write(stream)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	cfg, err := art.Image.ConfigFile()
	require.NoError(t, err)
	img, err := mutate.ConfigFile(empty.Image, cfg)
	require.NoError(t, err)
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, oci.ConfigMediaType)
	img = mutate.Annotations(img, art.Annotations).(v1.Image)
	var layerAnnotations map[string]string
	if annotate {
		layerAnnotations = map[string]string{oci.ContentDigestAnnotation: art.ContentDigest.String()}
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(gz.Bytes(), oci.ContentMediaType), Annotations: layerAnnotations})
	require.NoError(t, err)
	return img
}

// pushImage pushes img to ref (host/repository:tag) and returns its digest.
func pushImage(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	require.NoError(t, remote.Write(mustTag(t, ref), img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d.String()
}
