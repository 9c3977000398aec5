package gittree_test

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/gittree"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// WriteLinked writes what Write writes; the files the tree before holds
// the same (path, content, mode) are links to its folder's, the others
// (changed, added, another mode, another link target) are files of their
// own, and a file the folder before lost is written.
func TestWriteLinked(t *testing.T) {
	repo := t.TempDir()
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	commit := func(files map[string]string, exec map[string]bool, links map[string]string, remove ...string) *object.Tree {
		t.Helper()
		for _, f := range remove {
			require.NoError(t, os.Remove(filepath.Join(repo, f)))
		}
		for f, body := range files {
			p := filepath.Join(repo, f)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		}
		for f, x := range exec {
			mode := fs.FileMode(0o644)
			if x {
				mode = 0o755
			}
			require.NoError(t, os.Chmod(filepath.Join(repo, f), mode))
		}
		for f, target := range links {
			_ = os.Remove(filepath.Join(repo, f))
			require.NoError(t, os.Symlink(target, filepath.Join(repo, f)))
		}
		return commitAll(t, repo)
	}
	before := commit(map[string]string{
		"a.yaml": "a: 1\n", "sub/same.yaml": "same: 1\n", "sub/deep/kept.yaml": "kept: 1\n",
		"run.sh": "#!/bin/sh\n", "gone.yaml": "gone: 1\n", "old/old.yaml": "old: 1\n",
	}, map[string]bool{"run.sh": true}, map[string]string{"link": "a.yaml", "samelink": "a.yaml"})
	after := commit(map[string]string{"a.yaml": "a: 2\n", "new/new.yaml": "new: 1\n"},
		map[string]bool{"run.sh": false}, map[string]string{"link": "sub/same.yaml"}, "gone.yaml", "old/old.yaml")

	prevDir := filepath.Join(t.TempDir(), "before")
	require.NoError(t, gittree.Write(t.Context(), before, prevDir))
	want := filepath.Join(t.TempDir(), "want")
	require.NoError(t, gittree.Write(t.Context(), after, want))
	got := filepath.Join(t.TempDir(), "linked")
	require.NoError(t, gittree.WriteLinked(t.Context(), after, got, before, prevDir))
	assert.Equal(t, listing(t, want), listing(t, got), "what Write writes")

	linked := map[string]bool{}
	for f := range listing(t, got) {
		a, errA := os.Lstat(filepath.Join(prevDir, f))
		b, errB := os.Lstat(filepath.Join(got, f))
		require.NoError(t, errB)
		linked[f] = errA == nil && os.SameFile(a, b)
	}
	assert.Equal(t, map[string]bool{
		"sub/same.yaml": true, "sub/deep/kept.yaml": true, "samelink": true,
		"a.yaml": false, "run.sh": false, "link": false, "new/new.yaml": false,
	}, linked)

	require.NoError(t, os.Remove(filepath.Join(prevDir, "sub", "same.yaml")))
	again := filepath.Join(t.TempDir(), "again")
	require.NoError(t, gittree.WriteLinked(t.Context(), after, again, before, prevDir))
	assert.Equal(t, listing(t, want), listing(t, again), "a file the folder before lost is written")
}

// A tree one of whose folders the repository lacks (a treeless partial
// clone's) is an error that names the folder, not a tree written in part:
// go-git's own walk ends at that folder as if the tree did.
func TestWriteRefusesATreeInPart(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{"a/a.yaml": "a: 1\n", "b/deep/b.yaml": "b: 1\n", "c/c.yaml": "c: 1\n"})
	_, err := git.PlainInit(repo, false)
	require.NoError(t, err)
	tree := commitAll(t, repo)
	deep, err := tree.FindEntry("b/deep")
	require.NoError(t, err)
	obj := deep.Hash.String()
	require.NoError(t, os.Remove(filepath.Join(repo, ".git", "objects", obj[:2], obj[2:])))

	r, err := git.PlainOpen(repo) // no object cached
	require.NoError(t, err)
	tree, err = r.TreeObject(tree.Hash)
	require.NoError(t, err)
	err = gittree.Write(t.Context(), tree, filepath.Join(t.TempDir(), "out"))
	require.ErrorContains(t, err, "folder b/deep: not in the repository")
	_, err = gittree.Files(tree)
	require.ErrorContains(t, err, "folder b/deep")
}

// commitAll commits every file of the repository at repo and returns the
// commit's tree.
func commitAll(t *testing.T, repo string) *object.Tree {
	t.Helper()
	r, err := git.PlainOpen(repo)
	require.NoError(t, err)
	wt, err := r.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	h, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}})
	require.NoError(t, err)
	c, err := r.CommitObject(h)
	require.NoError(t, err)
	tree, err := c.Tree()
	require.NoError(t, err)
	return tree
}

// listing is each file below dir with its mode and content (a link's
// target).
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var body string
		if fi.Mode()&fs.ModeSymlink != 0 {
			body, err = os.Readlink(p)
		} else {
			var b []byte
			b, err = os.ReadFile(p)
			body = string(b)
		}
		out[filepath.ToSlash(rel)] = fi.Mode().String() + " " + body
		return err
	}))
	return out
}

// WriteArchive writes what git archive prints as Write writes a tree: the
// commit's pax header is passed over, and a path that leaves the folder is
// an error.
func TestWriteArchive(t *testing.T) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}},
		{Typeflag: tar.TypeDir, Name: "sub/", Mode: 0o775},
		{Typeflag: tar.TypeReg, Name: "sub/a.yaml", Mode: 0o664, Size: 5},
		{Typeflag: tar.TypeReg, Name: "run.sh", Mode: 0o775, Size: 5},
		{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "sub/a.yaml", Mode: 0o777},
	} {
		require.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte("a: 1\n"))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	dir := t.TempDir()
	require.NoError(t, gittree.WriteArchive(&b, dir))
	got := listing(t, dir)
	assert.Len(t, got, 3)
	for f, want := range map[string]string{"sub/a.yaml": "-rw-", "run.sh": "-rwx", "link": "L"} {
		assert.True(t, strings.HasPrefix(got[f], want), "%s: %s", f, got[f]) // the owner's bits: any umask leaves them
	}
	assert.True(t, strings.HasSuffix(got["run.sh"], " a: 1\n"))
	assert.True(t, strings.HasSuffix(got["link"], " sub/a.yaml"))

	b.Reset()
	tw = tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "../out.yaml", Mode: 0o644}))
	require.NoError(t, tw.Close())
	require.ErrorContains(t, gittree.WriteArchive(&b, t.TempDir()), `path "../out.yaml" leaves the tree`)
}
