//go:build unix

package inputfile

import (
	"io/fs"
	"sync"
	"syscall"
)

const maxKept = 1 << 20

// scratch holds buffers that ReadManifest reads into before copying out
// exactly the file's bytes; one grown past maxKept for a big file is not
// kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// ReadManifest returns the contents of the file at name, as os.ReadFile
// does (its errors are *fs.PathError too), with fewer system calls, and
// without Read's size limit: for the manifests of a tree, which lint reads
// by the thousand. os.ReadFile wraps the descriptor in an os.File, which
// registers it with the runtime's poller (a system call that fails for
// regular files), and stats it; on the 2-core VMs fluxpack's CI runs on
// that doubles the cost of a small file (BenchmarkReadManifest). This
// opens, reads and closes, no more; on systems that are not Unix it is
// os.ReadFile.
func ReadManifest(name string) ([]byte, error) {
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
