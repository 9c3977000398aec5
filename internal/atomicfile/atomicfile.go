// Package atomicfile writes files and directories so that a reader sees
// either nothing, the old content, or the whole new content: never half of
// it. Everything is written beside its destination and renamed into place.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Staged is a file written beside its destination, not yet in place.
type Staged struct {
	tmp, dst string
	done     bool
}

// Stage writes data to a temporary file in path's directory (created if
// needed) with mode perm, to be renamed to path by Commit or removed by
// Abort.
func Stage(path string, data []byte, perm os.FileMode) (*Staged, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, err
	}
	s := &Staged{tmp: f.Name(), dst: path}
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

// Abort removes the staged file; after Commit it does nothing.
func (s *Staged) Abort() {
	if !s.done {
		s.done = true
		_ = os.Remove(s.tmp)
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
