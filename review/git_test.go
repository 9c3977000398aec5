package review_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/review"
)

// gitFixture makes a Git repository whose main branch holds the fixture
// repository, tracked as origin/main, and whose checked-out branch
// "change" adds change on top, committed or not.
func gitFixture(t *testing.T, change string, commit bool) (dir string, baseCommit string) {
	t.Helper()
	dir = t.TempDir()
	copyTree(t, filepath.Join("testdata", "repo"), dir)
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "test", Email: "test@example.com", When: time.Unix(1700000000, 0)}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("base", &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/remotes/origin/main", h)); err != nil {
		t.Fatal(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Branch: "refs/heads/change", Create: true}); err != nil {
		t.Fatal(err)
	}
	cfg, err := repo.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{"https://git.example.com/platform/fleet.git"}}
	cfg.Branches["change"] = &config.Branch{Name: "change", Remote: "origin", Merge: "refs/heads/main"}
	if err := repo.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join("testdata", "changes", change), dir)
	if commit {
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Commit(change, &git.CommitOptions{Author: sig}); err != nil {
			t.Fatal(err)
		}
	}
	return dir, h.String()
}

func TestDefaultBaseAndExtract(t *testing.T) {
	for _, commit := range []bool{true, false} {
		dir, baseCommit := gitFixture(t, "vars", commit)
		rev, err := review.DefaultBase(dir)
		if err != nil {
			t.Fatal(err)
		}
		if rev.Commit != baseCommit {
			t.Fatalf("DefaultBase = %s, want the merge-base %s", rev.Commit, baseCommit)
		}
		top, cleanup, err := review.Extract(t.Context(), dir, rev, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		files, err := review.ChangedFiles(top, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(files, []string{"clusters/prod/vars.yaml"}) {
			t.Errorf("committed %v: changed files %v, want only the vars file", commit, files)
		}
		r, err := review.Compare(t.Context(), top, dir, "clusters/prod")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Objects) != 4 {
			t.Errorf("committed %v: %d objects changed, want 4", commit, len(r.Objects))
		}
		if err := cleanup(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(top); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cleanup left %s", top)
		}
	}
}

func TestResolveAndNoUpstream(t *testing.T) {
	dir, baseCommit := gitFixture(t, "image-bump", true)
	for _, how := range []string{"git", "go-git"} {
		restore := func() {}
		if how == "go-git" {
			restore = review.WithoutGitCLI()
		}
		for _, name := range []string{"main", "HEAD~1", baseCommit[:10]} {
			rev, err := review.Resolve(dir, name)
			if err != nil || rev.Commit != baseCommit || rev.Name != name {
				t.Errorf("%s: Resolve(%s) = %v, %v; want %s", how, name, rev, err, baseCommit)
			}
		}
		for _, name := range []string{"no-such-branch", "--all", ""} {
			if rev, err := review.Resolve(dir, name); err == nil {
				t.Errorf("%s: Resolve of %q: %v, no error", how, name, rev)
			}
		}
		restore()
	}
	// A repository with no upstream and no origin: DefaultBase says to
	// give --base.
	lone := t.TempDir()
	repo, err := git.PlainInit(lone, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if err := os.WriteFile(filepath.Join(lone, "a.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = wt.Add("a.yaml")
	if _, err := wt.Commit("a", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1, 0)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := review.DefaultBase(lone); !errors.Is(err, review.ErrNoBase) {
		t.Errorf("DefaultBase without upstream: %v, want ErrNoBase", err)
	}
	if _, err := review.DefaultBase(t.TempDir()); err == nil {
		t.Error("DefaultBase outside a Git repository: no error")
	}
}

// ChangedFiles: added, removed, edited (same size too), executable bit and
// link target changes; equal files and .git are left out.
func TestChangedFiles(t *testing.T) {
	base, head := t.TempDir(), t.TempDir()
	files := map[string]string{"same.yaml": "a: 1\n", "edited.yaml": "a: 1\n", "removed.yaml": "x\n", "mode.sh": "#!/bin/sh\n", ".git/HEAD": "ref: a\n"}
	testutil.WriteFiles(t, base, files)
	files["edited.yaml"] = "a: 2\n" // the same size
	delete(files, "removed.yaml")
	files["added.yaml"] = "y\n"
	files[".git/HEAD"] = "ref: b\n"
	testutil.WriteFiles(t, head, files)
	require.NoError(t, os.Chmod(filepath.Join(head, "mode.sh"), 0o755))
	require.NoError(t, os.Symlink("same.yaml", filepath.Join(base, "link.yaml")))
	require.NoError(t, os.Symlink("edited.yaml", filepath.Join(head, "link.yaml")))
	got, err := review.ChangedFiles(base, head)
	require.NoError(t, err)
	assert.Equal(t, []string{"added.yaml", "edited.yaml", "link.yaml", "mode.sh", "removed.yaml"}, got)
}

// A base whose tree cannot be written (a blob missing from a shallow or
// partial clone) is an error that names the revision, with nothing left
// in the temporary folder: not a crash.
func TestExtractMissingObject(t *testing.T) {
	dir, baseCommit := gitFixture(t, "vars", true)
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	commit, err := repo.CommitObject(plumbing.NewHash(baseCommit))
	require.NoError(t, err)
	tree, err := commit.Tree()
	require.NoError(t, err)
	f, err := tree.Files().Next()
	require.NoError(t, err)
	h := f.Hash.String()
	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "objects", h[:2], h[2:])))

	tmp := t.TempDir()
	_, cleanup, err := review.Extract(t.Context(), dir, review.Revision{Name: "main", Commit: baseCommit}, tmp)
	require.ErrorContains(t, err, "revision main")
	require.ErrorContains(t, err, "object not found")
	require.Nil(t, cleanup)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "a half-written base is removed")
}

// A sparse checkout (git sparse-checkout, actions/checkout's
// sparse-checkout) enables the worktreeConfig extension, which go-git
// refuses: the repository is reviewed all the same, with or without the
// git CLI. Another extension go-git does not know still fails, naming it.
func TestWorktreeConfigExtension(t *testing.T) {
	for _, version := range []string{"0", "1"} {
		dir, baseCommit := gitFixture(t, "image-bump", false)
		setGitConfig(t, dir, version, "[extensions]\n\tworktreeConfig = true\n")
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "config.worktree"), []byte("[core]\n\tsparseCheckout = true\n"), 0o644))
		for _, how := range []string{"git", "go-git"} {
			restore := func() {}
			if how == "go-git" {
				restore = review.WithoutGitCLI()
			}
			rev, err := review.DefaultBase(dir)
			require.NoError(t, err, "%s, format %s", how, version)
			assert.Equal(t, baseCommit, rev.Commit)
			top, err := review.Top(filepath.Join(dir, "clusters", "prod"))
			require.NoError(t, err)
			assert.Equal(t, dir, top)
			rep, err := review.CompareRevision(t.Context(), filepath.Join(dir, "clusters", "prod"), "main", nil)
			require.NoError(t, err, "%s, format %s", how, version)
			assert.True(t, rep.Changed(), "the image bump changes an object")
			restore()
		}
	}
	dir, _ := gitFixture(t, "image-bump", false)
	setGitConfig(t, dir, "1", "[extensions]\n\tworktreeConfig = true\n\trefStorage = reftable\n")
	_, err := review.DefaultBase(dir)
	require.Error(t, err)
	assert.ErrorContains(t, err, "refstorage")
}

// setGitConfig sets core.repositoryformatversion in a repository's
// configuration and appends more to it.
func setGitConfig(t *testing.T, dir, version, more string) {
	t.Helper()
	p := filepath.Join(dir, ".git", "config")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	text := strings.Replace(string(data), "[core]\n", "[core]\n\trepositoryformatversion = "+version+"\n", 1)
	require.Contains(t, text, "repositoryformatversion = "+version)
	require.NoError(t, os.WriteFile(p, []byte(text+more), 0o644))
}
