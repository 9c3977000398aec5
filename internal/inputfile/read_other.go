//go:build !unix

package inputfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// ReadManifest returns the contents of the file at name: os.ReadFile.
func ReadManifest(name string) ([]byte, error) { return os.ReadFile(name) }

// Equal reports whether the files at a and b hold the same bytes. See the
// Unix version; this one reads both whole with package os.
func Equal(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

// ReadRegular reads the file at name whole into alloc(size) when it is a
// regular file of at most limit bytes; otherwise it returns only the file's
// mode and size. See the Unix version; this one uses package os.
func ReadRegular(name string, limit int64, alloc func(size int) []byte) (Contents, error) {
	f, err := os.Open(name)
	if err != nil {
		return Contents{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Contents{}, err
	}
	c := Contents{Mode: fi.Mode(), Size: fi.Size()}
	if !c.Mode.IsRegular() || c.Size > limit {
		return c, nil
	}
	data := alloc(int(c.Size))
	if _, err := io.ReadFull(f, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return Contents{}, err
		}
		return Contents{}, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	c.Data = data
	return c, nil
}
