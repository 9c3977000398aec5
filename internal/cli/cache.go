package cli

import (
	"context"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/review"
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

// extractBase writes the base revision diff compares with: kept under
// CacheRoot, or into a temporary folder removed by cleanup without one or
// when it cannot be written there (a read-only home).
func extractBase(ctx context.Context, headRoot string, rev review.Revision) (top string, cleanup func() error, err error) {
	if root := CacheRoot(); root != "" {
		if top, err := review.ExtractKept(ctx, headRoot, rev, filepath.Join(root, "revisions")); err == nil {
			return top, func() error { return nil }, nil
		}
	}
	return review.Extract(ctx, headRoot, rev, "")
}
