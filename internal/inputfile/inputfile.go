// Package inputfile reads the small files fluxpack takes whole (stack
// files, IaC outputs, values maps, substituteFrom sources, Kustomization
// files) with a size limit, so that a file of gigabytes, or one that never
// ends, is refused with a clear error instead of filling memory; and the
// files of a tree, by the thousand, quickly (ReadManifest, ReadRegular).
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// MaxSize is the largest input file fluxpack reads whole: 16 MiB, far
// above any stack file or `terraform output -json` of a real platform.
const MaxSize = 16 << 20

// ErrTooLarge is wrapped by the error about a file over MaxSize. Packages
// layering, outputs and substitute export it too, under the same name.
var ErrTooLarge = errdefs.ErrTooLarge

// Read reads the file at path, or fails with an error wrapping ErrTooLarge
// when it holds more than MaxSize bytes. A pipe (`--outputs <(terraform
// output -json)`) is read up to the limit too.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxSize {
		return nil, tooLarge(path, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize { // it grew while being read
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("%s: %w: %d bytes, over the limit of %d bytes (16 MiB)", path, ErrTooLarge, size, MaxSize)
}

// Contents is what ReadRegular found at a path: the file's mode and size,
// and its bytes when it is a regular file within the limit.
type Contents struct {
	Data []byte      // nil unless Mode.IsRegular() and Size <= the limit
	Mode fs.FileMode // type bits and permissions
	Size int64
}

// Identity is what stat(2) says of one version of a file: its device and
// inode, mode, size, and modification and status-change times in
// nanoseconds. Writing to a file, or replacing it, changes its status-change
// time (ctime), which no program can set back; so a file whose Identity is
// the same as when it was read holds the same bytes, provided its ctime was
// older than the read by more than the file system's timestamp granularity
// (the file could otherwise change again within the same tick): see
// Settled. The zero Identity is "unknown": on systems other than Linux and
// macOS (see ReadDir and Stat).
type Identity struct {
	Dev, Ino     uint64
	Mode         uint32
	Size         int64
	Mtime, Ctime int64
}

// Known reports whether the system gave the identity.
func (id Identity) Known() bool { return id != Identity{} }

// Settled reports whether id's file had not changed for window before
// since (nanoseconds since the epoch): a file whose Identity was taken
// after since, then read, and whose Identity is the same later, has not
// changed since the read.
func (id Identity) Settled(since, window int64) bool {
	return id.Known() && id.Ctime <= since-window && id.Mtime <= since-window
}

// readDir is ReadDir without identities: os.ReadDir.
func readDir(dir string) ([]DirEntry, error) {
	des, err := os.ReadDir(dir)
	out := make([]DirEntry, 0, len(des))
	for _, de := range des {
		out = append(out, DirEntry{Name: de.Name(), Type: de.Type()})
	}
	return out, err
}
