//go:build linux || darwin

package inputfile

import (
	"errors"
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// DirEntry is one entry of a directory, as ReadDir lists it.
type DirEntry struct {
	Name string
	Type fs.FileMode // the type bits (fs.ModeDir, fs.ModeSymlink, ...) of the entry itself
	ID   Identity    // of the entry itself (a symlink's, not its target's); zero if ReadDir did not stat
}

// ReadDir lists the directory dir sorted by name, as os.ReadDir does; with
// stat, it gives each entry's Identity too, from fstatat(2) on the open
// directory, so no path is looked up again (a tree of thousands of files
// costs one system call per file).
func ReadDir(dir string, stat bool) ([]DirEntry, error) {
	if !stat {
		return readDir(dir)
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var names []string
	bp := scratch.Get().(*[]byte) // a tree has hundreds of directories: reuse the buffer
	defer scratch.Put(bp)
	buf := *bp
	for {
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.ReadDirent(fd, buf)
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names) // all of it, . and .. left out
	}
	slices.Sort(names)
	out := make([]DirEntry, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		err := ignoringEINTR(func() error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
		if errors.Is(err, unix.ENOENT) {
			continue // removed since it was listed, as os.ReadDir leaves it out
		}
		if err != nil {
			return nil, &fs.PathError{Op: "fstatat", Path: dir + "/" + name, Err: err}
		}
		id := identityOf(&st)
		out = append(out, DirEntry{Name: name, Type: fileMode(id.Mode).Type(), ID: id})
	}
	return out, nil
}

// Stat returns the Identity of the file at name, following symlinks.
func Stat(name string) (Identity, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Stat(name, &st) }); err != nil {
		return Identity{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return identityOf(&st), nil
}

func identityOf(st *unix.Stat_t) Identity {
	return Identity{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Mode: uint32(st.Mode), Size: int64(st.Size),
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}
}
