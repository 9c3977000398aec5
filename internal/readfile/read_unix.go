//go:build unix

package readfile

import (
	"io/fs"
	"sync"
	"syscall"
)

const maxKept = 1 << 20

// scratch holds buffers that Read reads into before copying out exactly
// the file's bytes; one grown past maxKept for a big file is not kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// Read returns the contents of the file at name, as os.ReadFile does; its
// errors are *fs.PathError too.
func Read(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
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
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
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
