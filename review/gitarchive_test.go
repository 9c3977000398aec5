package review_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// In a partial clone (--filter=blob:none, as actions/checkout's filter
// makes) the base's changed files are not in the repository: go-git
// cannot write the base, git archive fetches them from the promisor
// remote and does. The review is the one of a full clone, kept or not;
// without the git command it is go-git's error.
func TestCompareRevisionInAPartialClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command")
	}
	origin, base := gitFixture(t, "image-bump", true)
	git := func(dir string, args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git(origin, "config", "uploadpack.allowFilter", "true")
	partial := func() string { // a new one each time: git keeps what it fetches
		t.Helper()
		clone := filepath.Join(t.TempDir(), "clone")
		git(origin, "clone", "-q", "--filter=blob:none", "--branch", "change", "file://"+origin, clone)
		return filepath.Join(clone, "clusters", "prod")
	}

	want, err := review.CompareRevision(t.Context(), filepath.Join(origin, "clusters", "prod"), base, nil)
	require.NoError(t, err)
	require.NotEmpty(t, want.Objects)
	for _, ropts := range [][]review.RevisionOption{nil, {review.WithKeptRevisions(t.TempDir())}} {
		got, err := review.CompareRevision(t.Context(), partial(), base, ropts)
		require.NoError(t, err)
		assert.Equal(t, want.Objects, got.Objects)
	}

	restore := review.WithoutGitCLI()
	defer restore()
	_, err = review.CompareRevision(t.Context(), partial(), base, nil)
	require.ErrorContains(t, err, "object not found")
}
