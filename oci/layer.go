package oci

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// chunks is a byte stream held in fixed-size pieces, so holding a layer
// costs its size, not the doubling of a growing buffer. With spill set, a
// stream that grows past spillAt moves to a temporary file, as fluxcd/pkg/oci
// keeps its layer in one, so a big push does not hold its layer in memory;
// close removes the file.
type chunks struct {
	parts [][]byte
	size  int64
	spill bool
	file  *os.File
}

const (
	layerChunk = 64 << 10
	spillAt    = 4 << 20
)

func (c *chunks) Write(p []byte) (int, error) {
	if c.file == nil && c.spill && c.size+int64(len(p)) > spillAt {
		if err := c.toFile(); err != nil {
			return 0, err
		}
	}
	if c.file != nil {
		n, err := c.file.Write(p)
		c.size += int64(n)
		return n, err
	}
	n := len(p)
	for len(p) > 0 {
		if len(c.parts) == 0 || len(c.parts[len(c.parts)-1]) == layerChunk {
			c.parts = append(c.parts, make([]byte, 0, layerChunk))
		}
		last := &c.parts[len(c.parts)-1]
		k := min(len(p), layerChunk-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	c.size += int64(n)
	return n, nil
}

// toFile moves the stream to a temporary file.
func (c *chunks) toFile() error {
	f, err := os.CreateTemp("", "fluxpack-layer-*.tgz")
	if err != nil {
		return fmt.Errorf("spooling the layer: %w", err)
	}
	for _, p := range c.parts {
		if _, err := f.Write(p); err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("spooling the layer: %w", err)
		}
	}
	c.file, c.parts = f, nil
	return nil
}

// close removes the temporary file, if any.
func (c *chunks) close() {
	if c.file != nil {
		c.file.Close()
		os.Remove(c.file.Name())
		c.file = nil
	}
}

// reader reads the stream from the start.
func (c *chunks) reader() io.Reader {
	if c.file != nil {
		return io.NewSectionReader(c.file, 0, c.size)
	}
	rs := make([]io.Reader, len(c.parts))
	for i, p := range c.parts {
		rs[i] = bytes.NewReader(p)
	}
	return io.MultiReader(rs...)
}

// memLayer is a Flux content layer compressed in memory.
type memLayer struct {
	data    *chunks
	digest  v1.Hash // of the compressed bytes
	content v1.Hash // of the uncompressed tar stream: the DiffID
}

var _ v1.Layer = (*memLayer)(nil)

func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error) { return l.content, nil }
func (l *memLayer) Size() (int64, error)     { return l.data.size, nil }
func (l *memLayer) MediaType() (types.MediaType, error) {
	return ContentMediaType, nil
}

func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(l.data.reader()), nil
}

func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(l.data.reader())
}
