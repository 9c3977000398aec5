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
