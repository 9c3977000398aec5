package oci

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readFile is readFileOS in four system calls (open, fstat, read, close).
// os.Open would also try to add every file to the runtime's poller, which
// costs five more (epoll_ctl, fails for a regular file, and four fcntl) and
// a finalizer: more than half of a tree's reading time for small manifests.
// Anything but a regular file goes to readFileOS, for its errors.
func readFile(path string) fileData {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return fileData{err: &os.PathError{Op: "open", Path: path, Err: err}}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return fileData{err: &os.PathError{Op: "stat", Path: path, Err: err}}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return readFileOS(path)
	}
	if st.Size > inlineLimit {
		return fileData{big: true}
	}
	data := getBuf(int(st.Size))
	for n := 0; n < len(data); {
		var k int
		err := retryEINTR(func() (err error) {
			k, err = syscall.Read(fd, data[n:])
			return err
		})
		if err == nil && k == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			putBuf(data)
			return fileData{err: fmt.Errorf("reading %d bytes: %w", st.Size, err)}
		}
		n += k
	}
	return fileData{data: data, mode: normalMode(fs.FileMode(st.Mode & 0o777))}
}

// retryEINTR calls fn until it returns something else than EINTR, as package
// os does.
func retryEINTR(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
