package cli

import (
	"os"
	"path/filepath"
)

// CacheRoot is where the reading commands keep what they can reuse from
// one run to the next: $FLUXPACK_CACHE_DIR, or fluxpack
// in the user's cache directory; "" when $FLUXPACK_CACHE_DIR is "off" or
// there is no cache directory. kustomize/ holds kustomize's builds
// (fluxbuild.WithCache), revisions/ the base revisions diff compares with
// (review.ExtractKept).
func CacheRoot() string {
	dir := os.Getenv("FLUXPACK_CACHE_DIR")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "fluxpack")
	}
	return dir
}

// keptRevisions is where diff keeps the base revisions it reads from Git
// (review.ExtractKept), or "" without a cache.
func keptRevisions() string {
	if root := CacheRoot(); root != "" {
		return filepath.Join(root, "revisions")
	}
	return ""
}
