package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// archiver writes a tree as a tar stream the way fluxcd/pkg/tar does: a
// lexical walk, uid/gid, owner names and times zeroed, no gzip mtime, and
// here also modes normalised (directories and executables 0755, other files
// 0644), so the stream depends on nothing but names and contents.
type archiver struct {
	display      string // the tree's directory as the caller named it
	checkSecrets bool
	// onFile, when set, sees every file's archive name and content.
	onFile func(name string, data []byte)
	buf    bytes.Buffer
}

// writeTar writes the uncompressed tar stream of t to w.
func (a *archiver) writeTar(t *tree, w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, e := range t.entries {
		if e.dir {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e.name, Mode: e.mode()}); err != nil {
				return a.fileErr(e, err)
			}
			continue
		}
		data, err := a.read(e.src)
		if err != nil {
			return a.fileErr(e, err)
		}
		if a.checkSecrets {
			if line, obj := plaintextSecret(e.name, data); line > 0 {
				return &FileError{Path: filepath.Join(a.display, filepath.FromSlash(e.name)), Line: line, Err: fmt.Errorf("%s: %w", obj, ErrPlaintextSecret)}
			}
		}
		if a.onFile != nil {
			a.onFile(e.name, data)
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode(), Size: int64(len(data))}
		if err := tw.WriteHeader(hdr); err != nil {
			return a.fileErr(e, err)
		}
		if _, err := tw.Write(data); err != nil {
			return a.fileErr(e, err)
		}
	}
	return tw.Close()
}

// read returns the content of path in a buffer reused for the next file.
func (a *archiver) read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a.buf.Reset()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		a.buf.Grow(int(fi.Size()) + 1)
	}
	if _, err := a.buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return a.buf.Bytes(), nil
}

func (a *archiver) fileErr(e entry, err error) error {
	if fe, ok := err.(*FileError); ok {
		return fe
	}
	return &FileError{Path: filepath.Join(a.display, filepath.FromSlash(e.name)), Err: unwrapPath(err)}
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// contentDigest hashes the uncompressed tar stream of t: the cheap identity
// of an artifact's content, compared before anything is compressed or sent.
func (a *archiver) contentDigest(t *tree) (v1.Hash, error) {
	h := sha256.New()
	if err := a.writeTar(t, h); err != nil {
		return v1.Hash{}, err
	}
	return hashOf(h), nil
}

// layerBlob is a compressed layer held in memory with its digests.
type layerBlob struct {
	compressed []byte
	digest     v1.Hash // of the compressed bytes: the layer digest
	content    v1.Hash // of the uncompressed tar stream
}

// compress writes t as tar+gzip at gzip's default level with an empty header,
// byte for byte what fluxcd/pkg/tar writes for a tree with normal modes.
func (a *archiver) compress(t *tree) (*layerBlob, error) {
	var out bytes.Buffer
	zh := sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(&out, zh))
	th := sha256.New()
	if err := a.writeTar(t, io.MultiWriter(gz, th)); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return &layerBlob{compressed: out.Bytes(), digest: hashOf(zh), content: hashOf(th)}, nil
}

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}
}
