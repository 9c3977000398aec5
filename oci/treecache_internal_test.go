package oci

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// shortRacyWindow makes the tree cache cache files older than 20ms, not
// two seconds: the tests call settle after writing files, and change them
// only after a push; 20ms is over the coarse clock tick of Linux's file
// times.
func shortRacyWindow(t *testing.T) {
	t.Helper()
	old := racyWindow
	racyWindow = 20 * time.Millisecond
	t.Cleanup(func() { racyWindow = old })
}

// settle waits until files written now are older than the racy window.
func settle() { time.Sleep(racyWindow + 10*time.Millisecond) }

func treeCacheSupported(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("no tree cache on %s: file identities are read on Linux and macOS only", runtime.GOOS)
	}
}

// cacheFile returns the tree cache's entry for dir.
func cacheFile(t *testing.T, cache, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return treeCachePath(cache, real)
}

// TestTreeCacheHit: a push fills the cache, and the next push of the
// unchanged tree takes the content digest from it: a cache entry with the
// right fingerprint but another digest is believed (and the push then finds
// out, says the tree changed, and drops the entry).
func TestTreeCacheHit(t *testing.T) {
	treeCacheSupported(t)
	shortRacyWindow(t)
	host := testutil.NewRegistry(t).Host
	dir, cache := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"a/cm.yaml": "kind: ConfigMap\n", "b.yaml": "kind: Namespace\n"})
	settle()
	url := fmt.Sprintf("oci://%s/cached:v1", host)

	first, err := Push(t.Context(), dir, url, WithTreeCache(cache))
	require.NoError(t, err)
	require.True(t, first.Pushed)
	path := cacheFile(t, cache, dir)
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "Push with WithTreeCache wrote no cache entry")
	var c treeCacheEntry
	require.NoError(t, json.Unmarshal(raw, &c))
	assert.Equal(t, 4, c.Entries, "entries: the root, a, a/cm.yaml, b.yaml")

	again, err := Push(t.Context(), dir, url, WithTreeCache(cache))
	require.NoError(t, err)
	assert.False(t, again.Pushed, "the second push of an unchanged tree")
	assert.Equal(t, first.Digest, again.Digest)

	// Believed: the digest is taken from the entry, so the tag seems to
	// hold other content; compressing the tree shows the entry wrong.
	c.Content = "sha256:" + fmt.Sprintf("%064x", 1)
	raw, err = json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	_, err = Push(t.Context(), dir, url, WithTreeCache(cache))
	require.ErrorContains(t, err, "changed while being read")
	assert.NoFileExists(t, path, "a cache entry found wrong is dropped")

	res, err := Push(t.Context(), dir, url, WithTreeCache(cache))
	require.NoError(t, err)
	assert.False(t, res.Pushed, "the push after a dropped entry reads the tree")
}

// TestTreeCacheChanges: every change that changes the artifact makes the
// push read the tree again and push: the digest is the one a push without
// the cache computes.
func TestTreeCacheChanges(t *testing.T) {
	treeCacheSupported(t)
	shortRacyWindow(t)
	host := testutil.NewRegistry(t).Host
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"same size, modification time set back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "a", "cm.yaml")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, []byte("kind: ConfigMaq\n"), 0o644))
			require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}},
		{"file added", func(t *testing.T, dir string) {
			testutil.WriteFiles(t, dir, map[string]string{"a/new.yaml": "kind: Secretless\n"})
		}},
		{"file removed", func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "b.yaml"))) }},
		{"file renamed", func(t *testing.T, dir string) {
			require.NoError(t, os.Rename(filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")))
		}},
		{"made executable", func(t *testing.T, dir string) { require.NoError(t, os.Chmod(filepath.Join(dir, "b.yaml"), 0o755)) }},
		{"replaced by a file of the same size and times", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "b.yaml")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			tmp := filepath.Join(dir, "tmp")
			require.NoError(t, os.WriteFile(tmp, []byte("kind: Namespacf\n"), 0o644))
			require.NoError(t, os.Chtimes(tmp, fi.ModTime(), fi.ModTime()))
			require.NoError(t, os.Rename(tmp, p))
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, cache := t.TempDir(), t.TempDir()
			testutil.WriteFiles(t, dir, map[string]string{"a/cm.yaml": "kind: ConfigMap\n", "b.yaml": "kind: Namespace\n"})
			settle()
			url := fmt.Sprintf("oci://%s/changes%d:v1", host, i)
			_, err := Push(t.Context(), dir, url, WithTreeCache(cache))
			require.NoError(t, err)
			require.FileExists(t, cacheFile(t, cache, dir))

			tt.change(t, dir)
			res, err := Push(t.Context(), dir, url, WithTreeCache(cache))
			require.NoError(t, err)
			assert.True(t, res.Pushed, "push with the tree cache after the change")
			want, err := Push(t.Context(), dir, fmt.Sprintf("oci://%s/changes%d:nocache", host, i))
			require.NoError(t, err)
			assert.Equal(t, want.Digest, res.Digest, "digest with the tree cache, and without")
		})
	}
}

// TestTreeCacheSecrets: a tree cached while Secrets were allowed is
// checked again when they are not.
func TestTreeCacheSecrets(t *testing.T) {
	treeCacheSupported(t)
	shortRacyWindow(t)
	host := testutil.NewRegistry(t).Host
	dir, cache := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n"})
	settle()
	url := fmt.Sprintf("oci://%s/secrets:v1", host)
	_, err := Push(t.Context(), dir, url, WithTreeCache(cache), WithAllowSecrets())
	require.NoError(t, err)
	require.FileExists(t, cacheFile(t, cache, dir))

	_, err = Push(t.Context(), dir, url, WithTreeCache(cache))
	require.ErrorIs(t, err, ErrPlaintextSecret)
}

// TestTreeCacheRacy: files changed within the racy window before a push
// are not cached.
func TestTreeCacheRacy(t *testing.T) {
	treeCacheSupported(t)
	old := racyWindow
	racyWindow = time.Hour
	t.Cleanup(func() { racyWindow = old })
	host := testutil.NewRegistry(t).Host
	dir, cache := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"cm.yaml": "kind: ConfigMap\n"})
	_, err := Push(t.Context(), dir, fmt.Sprintf("oci://%s/racy:v1", host), WithTreeCache(cache))
	require.NoError(t, err)
	assert.NoFileExists(t, cacheFile(t, cache, dir), "a tree changed within the racy window is not cached")
}

func TestWithTreeCacheEmpty(t *testing.T) {
	_, err := Push(t.Context(), t.TempDir(), "oci://127.0.0.1:1/x:y", WithTreeCache(""))
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.ErrorContains(t, err, "WithTreeCache")
}
