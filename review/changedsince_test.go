package review_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// ChangedSince, which writes nothing, finds what ChangedFiles finds
// between the revision Extract writes and the working tree: for every
// named change of the fixture, committed or not, and for a file removed,
// made executable, turned into a link, ignored, moved, untracked while
// the base has it, and in another repository below the tree, and below the
// repository's top (--root); from the git command's answers and from
// go-git's alike (a machine without git), with a hook's GIT_DIR pointing
// elsewhere.
func TestChangedSinceMatchesExtract(t *testing.T) {
	gitCmd, err := exec.LookPath("git")
	if err != nil {
		t.Log("no git command: go-git's answers only")
	}
	t.Setenv("GIT_DIR", t.TempDir()) // as in a Git hook: not the fixture's
	changes, err := os.ReadDir(filepath.Join("testdata", "changes"))
	require.NoError(t, err)
	var tested int
	for _, c := range changes {
		for _, commit := range []bool{false, true} {
			dir, baseCommit := gitFixture(t, c.Name(), commit)
			if c.Name() == "vars" && !commit {
				require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
				require.NoError(t, os.Chmod(filepath.Join(dir, "clusters", "prod", "apps.yaml"), 0o755))
				require.NoError(t, os.Remove(filepath.Join(dir, "apps", "prod", "kustomization.yaml")))
				require.NoError(t, os.Symlink("../base/web/kustomization.yaml", filepath.Join(dir, "apps", "prod", "kustomization.yaml")))
				require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.out\n"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "render.out"), []byte("ignored"), 0o644))
				_, err := git.PlainInit(filepath.Join(dir, "vendor", "other"), false)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "vendor", "other", "a.yaml"), []byte("a: 1\n"), 0o644))
			}
			if c.Name() == "image-bump" && commit && gitCmd != "" {
				// Untracked, with the same content the base has: git diff
				// calls it deleted, ls-files untracked.
				cmd := exec.Command(gitCmd, "rm", "--cached", "-q", "clusters/prod/apps.yaml")
				cmd.Dir, cmd.Env = dir, slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_DIR=") })
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
			}
			if c.Name() == "reorder" && commit {
				// A file moved, committed: git diff's rename detection
				// would name only where it went.
				require.NoError(t, os.Rename(filepath.Join(dir, "README.md"), filepath.Join(dir, "NOTES.md")))
				repo, err := git.PlainOpen(dir)
				require.NoError(t, err)
				wt, err := repo.Worktree()
				require.NoError(t, err)
				require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
				_, err = wt.Commit("move", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000100, 0)}})
				require.NoError(t, err)
			}
			rev := review.Revision{Name: "base", Commit: baseCommit}
			top, cleanup, err := review.Extract(t.Context(), dir, rev, t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { _ = cleanup() })
			for _, sub := range []string{".", "clusters"} {
				want, err := review.ChangedFiles(filepath.Join(top, sub), filepath.Join(dir, sub))
				require.NoError(t, err)
				for _, how := range []string{"git", "go-git"} {
					if how == "git" && gitCmd == "" {
						continue
					}
					restore := func() {}
					if how == "go-git" {
						restore = review.WithoutGitCLI()
					}
					got, err := review.ChangedSince(filepath.Join(dir, sub), rev)
					restore()
					require.NoError(t, err)
					assert.Equal(t, want, got, "change %s (committed %v) under %s, from %s", c.Name(), commit, sub, how)
					tested++
				}
				if sub == "." && !commit {
					require.NotEmpty(t, want, "change %s changes files", c.Name())
				}
			}
		}
	}
	require.Greater(t, tested, 20)
}
