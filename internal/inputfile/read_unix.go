//go:build unix

package inputfile

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"syscall"
)

// This file is fluxpack's one raw-system-call file reader. os.Open wraps the
// descriptor in an os.File, which registers it with the runtime's poller (a
// system call that fails for regular files, and four fcntl) and sets a
// finalizer; for a tree of small manifests that is more than half of the
// reading time on the 2-core VMs fluxpack's CI runs on
// (BenchmarkReadManifest, oci's BenchmarkArchive). Here a file is opened,
// read and closed, no more. On systems that are not Unix, read_other.go does
// the same with package os.

const maxKept = 1 << 20

// scratch holds buffers that ReadManifest reads into before copying out
// exactly the file's bytes; one grown past maxKept for a big file is not
// kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// ReadManifest returns the contents of the file at name, as os.ReadFile
// does (its errors are *fs.PathError too), with fewer system calls, and
// without Read's size limit: for the manifests of a tree, which lint reads
// by the thousand. It does not even stat the file: it reads until the end.
func ReadManifest(name string) ([]byte, error) {
	fd, err := open(name)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	bp := scratch.Get().(*[]byte)
	buf := *bp
	defer func() {
		if cap(*bp) <= maxKept {
			scratch.Put(bp)
		}
	}()
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
		var k int
		err := ignoringEINTR(func() (err error) {
			k, err = syscall.Read(fd, buf[n:])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if k == 0 {
			break
		}
		n += k
	}
	out := make([]byte, n)
	copy(out, buf)
	return out, nil
}

// ReadRegular reads the file at name whole into alloc(size) when it is a
// regular file of at most limit bytes. Otherwise it reads nothing and
// returns only the file's mode and size, for the caller to refuse it or to
// stream it: package oci reads a tree's files this way into buffers it
// recycles, and streams those over its read-ahead limit. It opens, stats,
// reads and closes: four system calls for a small file. Its errors are
// *fs.PathError; a file that shrinks while being read gives
// io.ErrUnexpectedEOF.
func ReadRegular(name string, limit int64, alloc func(size int) []byte) (Contents, error) {
	fd, err := open(name)
	if err != nil {
		return Contents{}, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := ignoringEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return Contents{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	c := Contents{Mode: fileMode(uint32(st.Mode)), Size: st.Size}
	if !c.Mode.IsRegular() || c.Size > limit {
		return c, nil
	}
	data := alloc(int(c.Size))
	for n := 0; n < len(data); {
		var k int
		err := ignoringEINTR(func() (err error) {
			k, err = syscall.Read(fd, data[n:])
			return err
		})
		if err == nil && k == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return Contents{}, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		n += k
	}
	c.Data = data
	return c, nil
}

// Equal reports whether the files at a and b hold the same bytes, reading
// both in step into recycled buffers: open, read and close, with nothing
// allocated, as a comparison of two trees (a review's base and head)
// does for thousands of files. It stops at the first difference.
func Equal(a, b string) (bool, error) {
	fa, err := open(a)
	if err != nil {
		return false, err
	}
	defer syscall.Close(fa)
	fb, err := open(b)
	if err != nil {
		return false, err
	}
	defer syscall.Close(fb)
	pa, pb := scratch.Get().(*[]byte), scratch.Get().(*[]byte)
	defer scratch.Put(pa)
	defer scratch.Put(pb)
	// ReadManifest grows the buffers it returns to scratch: compare in
	// steps of the smaller.
	n := min(len(*pa), len(*pb))
	bufA, bufB := (*pa)[:n], (*pb)[:n]
	for {
		na, err := fill(fa, a, bufA)
		if err != nil {
			return false, err
		}
		nb, err := fill(fb, b, bufB)
		if err != nil {
			return false, err
		}
		if na != nb || string(bufA[:na]) != string(bufB[:nb]) {
			return false, nil
		}
		if na < n {
			return true, nil // both at their end
		}
	}
}

// fill reads from fd into buf until buf is full or the file ends, and
// returns how many bytes it read.
func fill(fd int, name string, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		var k int
		err := ignoringEINTR(func() (err error) {
			k, err = syscall.Read(fd, buf[n:])
			return err
		})
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n, nil
}

// open opens name for reading, as os.Open does but without an os.File.
func open(name string) (int, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

// ignoringEINTR calls fn until it returns something else than EINTR, as
// package os does.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// fileMode converts the st_mode of stat(2) to an fs.FileMode, as package os
// does: the type bits and the permissions.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
