package cli_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/cli"
)

// The reading commands' caches are under $FLUXPACK_CACHE_DIR, or fluxpack
// in the user's cache directory; "off" turns them off.
func TestCacheRoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the user's cache directory is set with $XDG_CACHE_HOME on Linux")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	t.Setenv("FLUXPACK_CACHE_DIR", "")
	assert.Equal(t, filepath.Join(xdg, "fluxpack"), cli.CacheRoot())
	t.Setenv("FLUXPACK_CACHE_DIR", "/srv/cache")
	assert.Equal(t, "/srv/cache", cli.CacheRoot())
	t.Setenv("FLUXPACK_CACHE_DIR", "off")
	assert.Empty(t, cli.CacheRoot())
}
