// Package gittree writes a Git tree's files into a folder: what a checkout
// holds, without a .git. Package review writes a base revision with it,
// package sources a fetched commit.
package gittree

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Write writes the files of tree into dir: regular files with their
// executable bit, symbolic links as links; submodules are left out, and a
// path that would leave dir is an error. dir's files must not exist.
func Write(ctx context.Context, tree *object.Tree, dir string) error {
	return write(ctx, tree, dir, "", nil)
}

// WriteLinked is Write, but a file prevDir holds as prev holds it (at the
// same path, with the same content and mode) is a hard link to prevDir's
// instead of a new file: a tree and the one before it differ in a few
// files, and writing a file costs far more than linking one. prevDir must
// hold prev's files as Write wrote them, and neither it nor dir may be
// written to after (they share those files). A file that cannot be linked
// (prevDir lost it, or is on another file system) is written.
func WriteLinked(ctx context.Context, tree *object.Tree, dir string, prev *object.Tree, prevDir string) error {
	same, err := Files(prev)
	if err != nil {
		return fmt.Errorf("the tree before: %w", err)
	}
	return write(ctx, tree, dir, prevDir, same)
}

// Files returns the files of tree that Write writes, by path: regular
// files, executable or not, and symbolic links; not folders nor
// submodules. Their content is not read.
func Files(tree *object.Tree) (map[string]object.TreeEntry, error) {
	if err := whole(tree, ""); err != nil {
		return nil, err
	}
	out := map[string]object.TreeEntry{}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch e.Mode {
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink:
			out[name] = e
		}
	}
}

// write is Write, linking from prevDir the files prev (its entries by
// path) holds the same.
func write(ctx context.Context, tree *object.Tree, dir, prevDir string, prev map[string]object.TreeEntry) error {
	if err := whole(tree, ""); err != nil {
		return err
	}
	made := map[string]bool{} // the folders made
	return tree.Files().ForEach(func(fl *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !filepath.IsLocal(filepath.FromSlash(fl.Name)) {
			return fmt.Errorf("path %q leaves the tree", fl.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(fl.Name))
		if d := filepath.Dir(p); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made[d] = true
		}
		if old, ok := prev[fl.Name]; ok && old.Hash == fl.Hash && old.Mode == fl.Mode {
			if os.Link(filepath.Join(prevDir, filepath.FromSlash(fl.Name)), p) == nil {
				return nil
			}
		}
		return writeFile(fl, p)
	})
}

// whole returns an error when the repository lacks a folder of tree, as
// a treeless partial clone does (git fetches it when asked; go-git does
// not): go-git's walk of a tree ends at such a folder as if the tree did,
// and would give part of it. dir is tree's path in the tree walked.
func whole(tree *object.Tree, dir string) error {
	for _, e := range tree.Entries {
		if e.Mode != filemode.Dir {
			continue
		}
		name := path.Join(dir, e.Name)
		sub, err := tree.Tree(e.Name)
		if err != nil {
			return fmt.Errorf("folder %s: not in the repository (a partial clone's?): %w", name, err)
		}
		if err := whole(sub, name); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes fl to p.
func writeFile(fl *object.File, p string) error {
	if fl.Mode == filemode.Symlink {
		target, err := fl.Contents()
		if err != nil {
			return fmt.Errorf("%s: %w", fl.Name, err)
		}
		return os.Symlink(target, p)
	}
	perm := os.FileMode(0o644)
	if fl.Mode == filemode.Executable {
		perm = 0o755
	}
	r, err := fl.Reader()
	if err != nil {
		return fmt.Errorf("%s: %w", fl.Name, err)
	}
	defer r.Close()
	return newFile(p, r, perm)
}

// newFile writes what r holds to p, a file that must not exist.
func newFile(p string, r io.Reader, perm os.FileMode) error {
	w, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// WriteArchive writes the files of the tar stream r that git archive
// prints into dst, as Write writes a tree's: regular files with their
// executable bit, symbolic links as links; a path that would leave dst is
// an error, and dst's files must not exist.
func WriteArchive(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(h.Name, "/")
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeReg, tar.TypeSymlink:
		default:
			continue // git's pax header, which holds the commit
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("path %q leaves the tree", h.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeSymlink {
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
			continue
		}
		perm := os.FileMode(0o644)
		if h.Mode&0o100 != 0 {
			perm = 0o755
		}
		if err := newFile(p, tr, perm); err != nil {
			return err
		}
	}
}
