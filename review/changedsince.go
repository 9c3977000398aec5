package review

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/fluxpack/fluxpack/internal/gittree"
)

// ChangedSince returns what ChangedFiles returns for the tree Extract
// writes for rev and the tree at head (a folder of the Git working tree
// that holds rev; the paths are relative to it), without writing rev's
// files: each file of head is hashed as Git hashes a blob and compared
// with the blob rev's tree names, so a change no layer reads can be told
// before any revision is written (unread).
func ChangedSince(head string, rev Revision) ([]string, error) {
	repo, err := openRepo(head)
	if err != nil {
		return nil, err
	}
	return changedSinceIn(repo, head, rev)
}

// changedSinceIn is ChangedSince in an open repository, the one holding
// head.
func changedSinceIn(repo *git.Repository, head string, rev Revision) ([]string, error) {
	if files, ok := gitChangedSince(head, rev.Commit); ok {
		return files, nil
	}
	tree, err := treeIn(repo, rev)
	if err != nil {
		return nil, err
	}
	top, err := topOf(repo, head)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(head)
	if err != nil {
		return nil, err
	}
	sub, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(sub) && sub != "." {
		return nil, fmt.Errorf("%s is not in the Git working tree %s", head, top)
	}
	prefix := ""
	if sub != "." {
		prefix = filepath.ToSlash(sub) + "/"
	}
	// rev's files under head, as Extract writes them: regular files with
	// their executable bit, links; no submodules.
	type blob struct {
		hash plumbing.Hash
		mode filemode.FileMode
	}
	files, err := gittree.Files(tree)
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	base := map[string]blob{}
	for name, e := range files {
		if rel, ok := strings.CutPrefix(name, prefix); ok {
			base[rel] = blob{e.Hash, e.Mode}
		}
	}
	rules, err := loadGitRules(head)
	if err != nil {
		return nil, err
	}
	h, err := listTree(head, rules)
	if err != nil {
		return nil, err
	}
	return changedPaths(h, base, func(e treeEntry, b blob) (bool, bool) {
		return e.link != "" != (b.mode == filemode.Symlink) || e.regular && e.exec != (b.mode == filemode.Executable), true
	}, func(p string) (bool, error) {
		data := []byte(h[p].link)
		if h[p].link == "" {
			var err error
			if data, err = os.ReadFile(filepath.Join(head, filepath.FromSlash(p))); err != nil {
				return false, err
			}
		}
		return plumbing.ComputeHash(plumbing.BlobObject, data) != base[p].hash, nil
	})
}
