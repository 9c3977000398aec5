// Package atomicfile writes files and directories so that a reader sees
// either nothing, the old content, or the whole new content: never half of
// it. Everything is written beside its destination and renamed into place:
// a file with Stage or WriteFile, several files together by staging each
// and committing them once all are written, a directory tree with StageDir.
// It is fluxpack's one temp-then-rename writer.
package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/internal/testhook"
)

// Staged is a file written beside its destination, not yet in place.
type Staged struct {
	tmp, dst string
	made     madeDirs
	done     bool
}

// Stage writes data to a temporary file in path's directory (created if
// needed) with mode perm, to be renamed to path by Commit or removed by
// Abort, with the directories Stage created for it.
func Stage(path string, data []byte, perm os.FileMode) (*Staged, error) {
	dir := filepath.Dir(path)
	made, err := mkdirAll(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		made.remove()
		return nil, err
	}
	s := &Staged{tmp: f.Name(), dst: path, made: made}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		s.Abort()
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		s.Abort()
		return nil, err
	}
	if err := f.Close(); err != nil {
		s.Abort()
		return nil, err
	}
	return s, nil
}

// Commit renames the staged file into place.
func (s *Staged) Commit() error {
	if s.done {
		return nil
	}
	s.done = true
	if err := os.Rename(s.tmp, s.dst); err != nil {
		_ = os.Remove(s.tmp)
		return err
	}
	return nil
}

// Abort removes the staged file, and the directories Stage created that
// are empty; after Commit it does nothing.
func (s *Staged) Abort() {
	if !s.done {
		s.done = true
		_ = os.Remove(s.tmp)
		s.made.remove()
	}
}

// WriteFile writes data to path with mode perm, atomically.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	s, err := Stage(path, data, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := s.Commit(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteFileContext is WriteFile, but ctx's end before the rename (an
// interrupt) leaves path as it was, and no temporary file.
func WriteFileContext(ctx context.Context, path string, data []byte, perm os.FileMode) error {
	testhook.At(ctx, testhook.Prepared)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: stopped before anything was put in place: %w", path, err)
	}
	s, err := Stage(path, data, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer s.Abort() // a no-op once committed
	testhook.At(ctx, testhook.Staged)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: stopped before anything was put in place: %w", path, err)
	}
	if err := s.Commit(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// StagedDir is a directory being filled beside its destination, not yet in
// place.
type StagedDir struct {
	tmp, dst string
	made     madeDirs
	done     bool
}

// StageDir creates an empty directory, mode 0755 whatever the umask, beside
// path (whose parent is created if needed), to be filled under Path, then
// renamed to path by Commit or removed with its contents by Abort (with
// the parents StageDir created, when they are empty).
func StageDir(path string) (*StagedDir, error) {
	path = filepath.Clean(path)
	parent := filepath.Dir(path)
	made, err := mkdirAll(parent)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		made.remove()
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.RemoveAll(tmp)
		made.remove()
		return nil, err
	}
	return &StagedDir{tmp: tmp, dst: path, made: made}, nil
}

// Path is the staged directory, to write the files into.
func (s *StagedDir) Path() string { return s.tmp }

// Commit renames the staged directory to its destination. A directory
// already there is replaced whole: moved aside, put back if the staged one
// cannot take its place, and removed once it has. Callers decide beforehand
// whether what is there may be replaced.
func (s *StagedDir) Commit() error {
	if s.done {
		return nil
	}
	s.done = true
	if _, err := os.Lstat(s.dst); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(s.tmp, s.dst); err != nil {
			_ = os.RemoveAll(s.tmp)
			return err
		}
		return nil
	}
	old := s.tmp + ".old"
	if err := os.Rename(s.dst, old); err != nil {
		_ = os.RemoveAll(s.tmp)
		return err
	}
	if err := os.Rename(s.tmp, s.dst); err != nil {
		_ = os.RemoveAll(s.tmp)
		if rerr := os.Rename(old, s.dst); rerr != nil {
			return fmt.Errorf("%w (the previous content is in %s)", err, old)
		}
		return err
	}
	return os.RemoveAll(old)
}

// Abort removes the staged directory and its contents, and the parents
// StageDir created that are empty; after Commit it does nothing.
func (s *StagedDir) Abort() {
	if !s.done {
		s.done = true
		_ = os.RemoveAll(s.tmp)
		s.made.remove()
	}
}

// madeDirs are the directories mkdirAll created, deepest first.
type madeDirs []string

// mkdirAll is os.MkdirAll(dir, 0o755), and returns the directories it
// created, for an abort to remove.
func mkdirAll(dir string) (madeDirs, error) {
	var made madeDirs
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return made, nil
}

// remove removes the directories, deepest first, while they are empty:
// another writer's file in one keeps it and its parents.
func (m madeDirs) remove() {
	for _, d := range m {
		if os.Remove(d) != nil {
			return
		}
	}
}
