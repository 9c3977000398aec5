package review_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
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

// The head is read while Git answers what the base is. When there is then
// nothing to compare (a revision that is not there), that read is stopped
// and what it laid out (the ExternalArtifacts of an ArtifactGenerator)
// removed before CompareRevision returns; when there is, the report is
// the same as Compare's of the two trees, and nothing is left either. (A
// change no layer reads, in TestCompareRevision, is said without waiting
// for the read: unread says so only of a tree that lays nothing out.)
func TestCompareRevisionHeadRead(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "generator", "repo"), dir)
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	base, err := wt.Commit("base", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	entry := filepath.Join(dir, "clusters", "staging")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the head's read lays out artifacts
	left := func() []string {
		t.Helper()
		des, err := os.ReadDir(tmp)
		require.NoError(t, err)
		var names []string
		for _, d := range des {
			names = append(names, d.Name())
		}
		return names
	}

	_, err = review.CompareRevision(t.Context(), entry, "no-such-revision", nil)
	require.Error(t, err)
	assert.Empty(t, left(), "a revision that is not there")

	values := filepath.Join(dir, "apps", "staging", "podinfo-values.yaml")
	data, err := os.ReadFile(values)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(values, bytes.Replace(data, []byte("replicaCount: "), []byte("replicaCount: 1"), 1), 0o644))
	rep, err := review.CompareRevision(t.Context(), entry, base.String(), nil)
	require.NoError(t, err)
	assert.Empty(t, left(), "a change compared")
	baseDir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "generator", "repo"), baseDir)
	want, err := review.Compare(t.Context(), baseDir, dir, "clusters/staging", review.WithNames(base.String(), "working tree"))
	require.NoError(t, err)
	require.NotEmpty(t, want.Objects, "the values change changes the release")
	assert.Equal(t, want.Objects, rep.Objects)
	assert.Equal(t, want.Rendered, rep.Rendered)
}
