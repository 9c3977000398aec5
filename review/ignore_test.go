package review

import (
	"maps"
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

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// ignoreFixture commits a repository whose files are then ignored every
// way Git ignores them, and adds untracked files beside them. excludes is
// how the excludes file is given: "xdg" ($XDG_CONFIG_HOME/git/ignore, the
// default) or "config" (core.excludesFile in the repository's config).
func ignoreFixture(t *testing.T, excludes string) (dir, commit string) {
	t.Helper()
	dir = t.TempDir()
	// The machine's configuration is not read; the excludes file is the
	// fixture's.
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	testutil.WriteFiles(t, dir, map[string]string{
		"a.yaml":              "a: 1\n",
		"sub/b.yaml":          "b: 1\n",
		"build/tracked.yaml":  "tracked: true\n", // in a folder ignored below
		"tracked.secret.yaml": "tracked: true\n", // matches a pattern added below
	})
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	_, err = wt.Commit("files", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	testutil.WriteFiles(t, dir, map[string]string{
		".gitignore":     "# rendered\nout/\n*.secret.yaml\n!keep.secret.yaml\n/build\n",
		"sub/.gitignore": "local.yaml\n!important.secret.yaml\n",
	})
	for _, f := range []string{".gitignore", "sub/.gitignore"} {
		_, err := wt.Add(f)
		require.NoError(t, err)
	}
	h, err := wt.Commit("ignores", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	testutil.WriteFiles(t, dir, map[string]string{
		".git/info/exclude":         "scratch/\n",
		"new.yaml":                  "untracked\n",
		"keep.secret.yaml":          "re-included\n",
		"sub/important.secret.yaml": "re-included below\n",
		"out/render.yaml":           "rendered\n",
		"out/deep/more.yaml":        "rendered\n",
		"x.secret.yaml":             "ignored\n",
		"build/new.yaml":            "in an ignored folder\n",
		"sub/local.yaml":            "ignored below\n",
		"scratch/notes.yaml":        "excluded\n",
		"state.tfstate":             "excluded globally\n",
		"vendor/other/x.yaml":       "another repository's\n",
	})
	_, err = git.PlainInit(filepath.Join(dir, "vendor", "other"), false)
	require.NoError(t, err)
	switch excludes {
	case "xdg":
		testutil.WriteFiles(t, xdg, map[string]string{"git/ignore": "*.tfstate\n"})
	case "config":
		f := filepath.Join(t.TempDir(), "excludes")
		require.NoError(t, os.WriteFile(f, []byte("*.tfstate\n"), 0o644))
		cfg, err := repo.Config()
		require.NoError(t, err)
		cfg.Raw.Section("core").SetOption("excludesFile", f)
		require.NoError(t, repo.SetConfig(cfg))
	}
	return dir, h.String()
}

// TestGitIgnored: what ChangedFiles lists of a working tree is what git
// ls-files lists, tracked and untracked but not ignored, for every way to
// ignore a file; a clean checkout has no changed file against its HEAD.
func TestGitIgnored(t *testing.T) {
	want := []string{
		".gitignore", "a.yaml", "build/tracked.yaml", "keep.secret.yaml", "new.yaml",
		"sub/.gitignore", "sub/b.yaml", "sub/important.secret.yaml", "tracked.secret.yaml",
	}
	for _, excludes := range []string{"xdg", "config"} {
		t.Run(excludes, func(t *testing.T) {
			dir, commit := ignoreFixture(t, excludes)
			rules, err := loadGitRules(dir)
			require.NoError(t, err)
			require.NotNil(t, rules)
			files, err := listTree(dir, rules)
			require.NoError(t, err)
			assert.Equal(t, want, slices.Sorted(maps.Keys(files)))
			if _, err := exec.LookPath("git"); err == nil {
				var byGit []string
				for _, l := range strings.Split(testutil.Git(t, dir, "ls-files", "--cached", "--others", "--exclude-standard"), "\n") {
					if !strings.HasSuffix(l, "/") { // another repository, listed as a folder
						byGit = append(byGit, l)
					}
				}
				slices.Sort(byGit)
				assert.Equal(t, byGit, want, "git ls-files lists the same")
			}
			for rel, ignored := range map[string]bool{
				"out": true, "out/render.yaml": true, "out/missing.json": true, "terraform.json": false,
				"build/tracked.yaml": false, "build/new.yaml": true, "sub/local.yaml": true,
				"sub/important.secret.yaml": false, "state.tfstate": true, "scratch/notes.yaml": true,
			} {
				assert.Equal(t, ignored, rules.ignored(rel), "ignored(%q)", rel)
			}

			// The base, written into a folder the checkout ignores, is read
			// whole: only the untracked, unignored files differ.
			top, cleanup, err := Extract(t.Context(), dir, Revision{Name: "HEAD", Commit: commit}, filepath.Join(dir, "out"))
			require.NoError(t, err)
			defer func() { require.NoError(t, cleanup()) }()
			changed, err := ChangedFiles(top, dir)
			require.NoError(t, err)
			assert.Equal(t, []string{"keep.secret.yaml", "new.yaml", "sub/important.secret.yaml"}, changed)
			// A tracked file that matches a pattern is still compared.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tracked.secret.yaml"), []byte("edited\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "build", "tracked.yaml"), []byte("edited\n"), 0o644))
			changed, err = ChangedFiles(top, dir)
			require.NoError(t, err)
			assert.Equal(t, []string{"build/tracked.yaml", "keep.secret.yaml", "new.yaml", "sub/important.secret.yaml", "tracked.secret.yaml"}, changed)
		})
	}
}

// Outside a Git working tree nothing is ignored: .gitignore is a file
// like another.
func TestNoGitNothingIgnored(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{".gitignore": "out/\n", "out/a.yaml": "a\n"})
	rules, err := loadGitRules(dir)
	require.NoError(t, err)
	require.Nil(t, rules)
	files, err := listTree(dir, rules)
	require.NoError(t, err)
	assert.Equal(t, []string{".gitignore", "out/a.yaml"}, slices.Sorted(maps.Keys(files)))
}

func TestRootPathsRel(t *testing.T) {
	root := filepath.Join(t.TempDir(), "fluxpack-base-1")
	rp := newRootPaths(root)
	for _, tt := range []struct{ in, want string }{
		{"open " + root + "/vars/x.json: no such file", "open vars/x.json: no such file"},
		{"reading " + root + ": denied", "reading .: denied"},
		{"'" + root + "/a' and '" + root + "/b'", "'a' and 'b'"},
		{root + "2/a", root + "2/a"},
		{root + "-other/a", root + "-other/a"},
		{"nothing to do", "nothing to do"},
	} {
		assert.Equal(t, tt.want, rp.rel(tt.in), "rel(%q)", tt.in)
	}
}

// In a linked worktree (git worktree add), .git is a file and
// info/exclude is the main repository's: neither is a changed file.
func TestLinkedWorktreeIgnored(t *testing.T) {
	dir, commit := ignoreFixture(t, "xdg")
	wt := filepath.Join(t.TempDir(), "wt")
	testutil.Git(t, dir, "worktree", "add", "--detach", wt, commit)
	testutil.WriteFiles(t, wt, map[string]string{"scratch/notes.yaml": "excluded\n", "out/render.yaml": "rendered\n"})
	top, cleanup, err := Extract(t.Context(), wt, Revision{Name: "HEAD", Commit: commit}, t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, cleanup()) }()
	changed, err := ChangedFiles(top, wt)
	require.NoError(t, err)
	assert.Empty(t, changed)
}
