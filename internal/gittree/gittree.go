// Package gittree writes a Git tree's files into a folder: what a checkout
// holds, without a .git. Package review writes a base revision with it,
// package sources a fetched commit.
package gittree

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Write writes the files of tree into dir: regular files with their
// executable bit, symbolic links as links; submodules are left out, and a
// path that would leave dir is an error. dir's files must not exist.
func Write(ctx context.Context, tree *object.Tree, dir string) error {
	return tree.Files().ForEach(func(fl *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !filepath.IsLocal(filepath.FromSlash(fl.Name)) {
			return fmt.Errorf("path %q leaves the tree", fl.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(fl.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
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
		w, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, r); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	})
}
