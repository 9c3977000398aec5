package review_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// ExtractKept writes a revision once and gives the same folder, with the
// revision's files, to every later call; old revisions are removed. The
// folder is named for the tree alike from the git command's answers and
// from go-git's.
func TestExtractKept(t *testing.T) {
	dir, _ := gitFixture(t, "vars", true)
	withGit := extractKept(t, dir)
	restore := review.WithoutGitCLI()
	defer restore()
	assert.Equal(t, withGit, extractKept(t, dir), "the same folder without the git command")
}

// extractKept checks ExtractKept in the repository at dir and returns the
// name of the folder it keeps HEAD~1 in.
func extractKept(t *testing.T, dir string) string {
	t.Helper()
	base, err := review.Resolve(dir, "HEAD~1")
	require.NoError(t, err)
	head, err := review.Resolve(dir, "HEAD")
	require.NoError(t, err)
	keep := t.TempDir()

	// Revisions unused for over a week, and the folder of a write that
	// never ended, are removed when a revision is written.
	old := time.Now().Add(-8 * 24 * time.Hour)
	for _, name := range []string{"0123456789abcdef0123456789abcdef01234567", ".tmp-123"} {
		require.NoError(t, os.MkdirAll(filepath.Join(keep, name), 0o700))
		require.NoError(t, os.Chtimes(filepath.Join(keep, name), old, old))
	}

	top, err := review.ExtractKept(t.Context(), dir, base, keep)
	require.NoError(t, err)
	want, cleanup, err := review.Extract(t.Context(), dir, base, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cleanup() })
	files, err := review.ChangedFiles(want, top)
	require.NoError(t, err)
	assert.Empty(t, files, "the kept revision holds what Extract writes")
	entries, err := os.ReadDir(keep)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the old revision and the unfinished write are removed")
	sub := filepath.Join(t.TempDir(), "revisions")
	_, err = review.ExtractKept(t.Context(), dir, base, sub)
	require.NoError(t, err)
	info, err := os.Stat(sub)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the kept revisions are their owner's only")

	// A later call reads the kept folder and writes nothing: it ends
	// even with ctx done (a write stops at once), and a file only that
	// folder holds is still there.
	marker := filepath.Join(top, "kept-marker")
	require.NoError(t, os.WriteFile(marker, nil, 0o644))
	done, cancel := context.WithCancel(t.Context())
	cancel()
	again, err := review.ExtractKept(done, dir, base, keep)
	require.NoError(t, err, "the revision is not written again")
	assert.Equal(t, top, again)
	assert.FileExists(t, marker)

	other, err := review.ExtractKept(t.Context(), dir, head, keep)
	require.NoError(t, err)
	assert.NotEqual(t, top, other, "another tree has its own folder")
	files, err = review.ChangedFiles(other, dir)
	require.NoError(t, err)
	assert.Empty(t, files, "HEAD's tree is the working tree")
	// The files HEAD's tree shares with the revision kept before are
	// links to that revision's; the changed one is a file of its own.
	for f, shared := range map[string]bool{"clusters/prod/apps.yaml": true, "clusters/prod/vars.yaml": false} {
		a, err := os.Stat(filepath.Join(top, filepath.FromSlash(f)))
		require.NoError(t, err)
		b, err := os.Stat(filepath.Join(other, filepath.FromSlash(f)))
		require.NoError(t, err)
		assert.Equal(t, shared, os.SameFile(a, b), f)
	}

	_, err = review.ExtractKept(t.Context(), dir, base, "")
	require.Error(t, err)
	return filepath.Base(top)
}
