package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fluxpack/fluxpack/internal/gittree"
)

// How many revisions ExtractKept keeps, and for how long.
const (
	keptRevisions = 4                  // the newest used are kept (a tree each)
	keptMaxAge    = 7 * 24 * time.Hour // one unused this long is removed
	keptInUse     = time.Hour          // one used this recently is never removed
)

// ExtractKept is Extract into dir, kept there for the next call: the files
// of rev's tree are written once, into a folder named for the tree, and
// read from there by every later call for a commit with the same tree
// (writing a repository's files is most of what a one-commit diff costs
// once kustomize's builds are cached; fluxbuild.WithCache). The files a
// tree shares with the revision kept there last are hard links to that
// revision's (a base that moved on by a few commits writes a few files;
// gittree.WriteLinked). The folder is renamed into place whole once
// written, so a folder there is complete; it must not be written to (its
// files may be another kept revision's too). A kept revision holds the
// commit's files as they are committed (what the repository's .git
// already holds, a Secret committed in clear included), and keep is made
// readable by its owner only. The revisions not used for a week are
// removed, and beyond the four used last, those not used for an hour.
func ExtractKept(ctx context.Context, dir string, rev Revision, keep string) (top string, err error) {
	if keep == "" {
		return "", errors.New("keeping revisions: empty directory")
	}
	repo, err := openRepo(dir)
	if err != nil {
		return "", err
	}
	return extractKeptIn(ctx, repo, dir, rev, keep)
}

// extractKeptIn is ExtractKept from an open repository.
func extractKeptIn(ctx context.Context, repo *git.Repository, dir string, rev Revision, keep string) (top string, err error) {
	// The tree's name from the git command, when there is one: a kept
	// tree is then used without go-git reading the pack's index.
	name, ok := gitTree(dir, rev.Commit)
	var tree *object.Tree
	if !ok {
		if tree, err = treeIn(repo, rev); err != nil {
			return "", err
		}
		name = tree.Hash.String()
	}
	top = filepath.Join(keep, name)
	now := time.Now()
	if fi, err := os.Stat(top); err == nil && fi.IsDir() {
		_ = os.Chtimes(top, now, now) // used: the age pruneKept reads
		return top, nil
	}
	if err := os.MkdirAll(keep, 0o700); err != nil {
		return "", fmt.Errorf("keeping revisions in %s: %w", keep, err)
	}
	pruneKept(keep, now)
	tmp, err := os.MkdirTemp(keep, ".tmp-")
	if err != nil {
		return "", fmt.Errorf("keeping revisions in %s: %w", keep, err)
	}
	write := func() (err error) {
		if tree == nil {
			if tree, err = treeIn(repo, rev); err != nil {
				return err
			}
		}
		if prev, prevDir := lastKept(repo, keep); prev != nil {
			// The files the tree shares with the revision kept last
			// are links to that revision's.
			err = gittree.WriteLinked(ctx, tree, tmp, prev, prevDir)
		} else {
			err = gittree.Write(ctx, tree, tmp)
		}
		if err != nil {
			return fmt.Errorf("revision %s: %w", rev, err)
		}
		return nil
	}
	if err := writeRevision(ctx, dir, rev, tmp, write); err != nil {
		_ = os.RemoveAll(tmp) // nothing half-written is left behind
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, top); err != nil {
		// Another process wrote the same tree first: use that.
		_ = os.RemoveAll(tmp)
		if fi, serr := os.Stat(top); serr != nil || !fi.IsDir() {
			return "", fmt.Errorf("keeping revision %s: %w", rev, err)
		}
	}
	return top, nil
}

// lastKept returns the tree of the revision kept in keep that was used
// last, of those repo holds, and its folder; nil when there is none.
func lastKept(repo *git.Repository, keep string) (*object.Tree, string) {
	des, err := os.ReadDir(keep)
	if err != nil {
		return nil, ""
	}
	var last *object.Tree
	var lastDir string
	var lastUsed time.Time
	for _, d := range des {
		if !plumbing.IsHash(d.Name()) || !d.IsDir() {
			continue // .tmp- folders: writes under way
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().After(lastUsed) {
			continue
		}
		t, err := repo.TreeObject(plumbing.NewHash(d.Name()))
		if err != nil {
			continue // another repository's
		}
		last, lastDir, lastUsed = t, filepath.Join(keep, d.Name()), fi.ModTime()
	}
	return last, lastDir
}

// pruneKept removes the kept revisions that pass the ages above, and the
// folders of writes that never ended.
func pruneKept(keep string, now time.Time) {
	des, err := os.ReadDir(keep)
	if err != nil {
		return
	}
	type kept struct {
		path string
		used time.Time
	}
	var ks []kept
	for _, d := range des {
		fi, err := d.Info()
		if err != nil || !fi.IsDir() {
			continue
		}
		p := filepath.Join(keep, d.Name())
		if strings.HasPrefix(d.Name(), ".tmp-") {
			if now.Sub(fi.ModTime()) > keptInUse {
				_ = os.RemoveAll(p)
			}
			continue
		}
		ks = append(ks, kept{p, fi.ModTime()})
	}
	slices.SortFunc(ks, func(a, b kept) int { return b.used.Compare(a.used) })
	for i, k := range ks {
		age := now.Sub(k.used)
		if age > keptMaxAge || i >= keptRevisions-1 && age > keptInUse {
			_ = os.RemoveAll(k.path)
		}
	}
}
