package review_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// CompareRevision reads the base revision from Git and compares it with
// the working tree, keeping the revision for the next diff; a change no
// layer reads is told from Git's objects alone, and writes nothing.
func TestCompareRevision(t *testing.T) {
	dir, base := gitFixture(t, "image-bump", false)
	keep := t.TempDir()
	ropts := []review.RevisionOption{review.WithKeptRevisions(keep)}
	entry := filepath.Join(dir, "clusters", "prod")

	rep, err := review.CompareRevision(t.Context(), entry, base, ropts)
	require.NoError(t, err)
	assert.True(t, rep.Changed(), "the image bump changes an object")
	assert.Equal(t, "working tree", rep.Head)
	kept, err := os.ReadDir(keep)
	require.NoError(t, err)
	assert.NotEmpty(t, kept, "the base revision is kept")
	again, err := review.CompareRevision(t.Context(), entry, base, ropts)
	require.NoError(t, err)
	assert.Equal(t, rep.Objects, again.Objects, "the kept revision compares the same")

	// Only the README changes: no layer reads it.
	unreadDir, _ := gitFixture(t, "image-bump", true)
	require.NoError(t, os.WriteFile(filepath.Join(unreadDir, "README.md"), []byte("changed\n"), 0o644))
	none := t.TempDir()
	rep, err = review.CompareRevision(t.Context(), filepath.Join(unreadDir, "clusters", "prod"), "HEAD", []review.RevisionOption{review.WithKeptRevisions(none)})
	require.NoError(t, err)
	assert.True(t, rep.Unread)
	assert.Equal(t, []string{"README.md"}, rep.Files)
	left, err := os.ReadDir(none)
	require.NoError(t, err)
	assert.Empty(t, left, "a change no layer reads writes no revision")

	_, err = review.CompareRevision(t.Context(), entry, base, []review.RevisionOption{nil})
	require.ErrorIs(t, err, review.ErrInvalidOption)
}
