package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/fluxcd/pkg/tar"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
)

// Metadata describes a pulled artifact.
type Metadata struct {
	// URL is the artifact's oci:// URL as given.
	URL string `json:"url"`
	// Digest is host/repository@sha256:… of the manifest.
	Digest      string            `json:"digest"`
	Created     string            `json:"created,omitempty"`
	Source      string            `json:"source,omitempty"`
	Revision    string            `json:"revision,omitempty"`
	Files       int               `json:"files"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ErrNoLayer is wrapped by Pull's error when the artifact has no layer
// WithLayerSelector's media type names (or no layer at all).
var ErrNoLayer = errors.New("no layer")

// MaxPullSize bounds the uncompressed size of a pulled artifact, as
// source-controller's default does.
const MaxPullSize = tar.DefaultMaxUntarSize

// Pull downloads the Flux artifact at url and extracts it into dir, which
// must not exist or be an empty directory. Entries that would land outside
// dir, symlinks and special files are refused. The artifact is extracted
// into a temporary directory beside dir and renamed into place, so dir never
// holds half an artifact.
//
// Pull is Client.Pull with url parsed, on a Client of its own.
func Pull(ctx context.Context, url, dir string, opts ...PullOption) (*Metadata, error) {
	if dir == "" {
		return nil, fmt.Errorf("pulling %s: no directory to extract into", redactRef(url))
	}
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("pulling %s into %s: %w", redactRef(url), dir, err)
	}
	return new(Client).Pull(ctx, ref, dir, opts...)
}

// Pull downloads the Flux artifact at ref and extracts it into dir, as the
// package-level Pull describes.
func (c *Client) Pull(ctx context.Context, ref Ref, dir string, opts ...PullOption) (*Metadata, error) {
	if dir == "" {
		return nil, fmt.Errorf("pulling %s: no directory to extract into", ref)
	}
	return run(ctx, c, fmt.Sprintf("pulling %s into %s", ref, dir), opts, PullOption.applyPull, nil,
		func(o *options) (*Metadata, error) { return pull(ctx, ref, dir, o) })
}

func pull(ctx context.Context, r Ref, dir string, o *options) (*Metadata, error) {
	ref := r.at(o).Reference()
	if err := checkEmptyOrAbsent(dir); err != nil {
		return nil, err
	}
	ro := o.remoteOptions(ctx)
	desc, err := remote.Get(ref, ro...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", URL(ref), err)
	}
	var layer *v1.Descriptor
	if o.layerSelector == nil {
		if layer = fluxLayer(desc); layer == nil {
			return nil, fmt.Errorf("%s is not a Flux artifact (want config %s and layer %s)", URL(ref), ConfigMediaType, ContentMediaType)
		}
	} else if layer = selectLayer(desc, *o.layerSelector); layer == nil {
		if *o.layerSelector == "" {
			return nil, fmt.Errorf("%s: %w", URL(ref), ErrNoLayer)
		}
		return nil, fmt.Errorf("%s: %w of media type %s", URL(ref), ErrNoLayer, *o.layerSelector)
	}
	blob, err := remote.Layer(ref.Context().Digest(layer.Digest.String()), ro...)
	if err != nil {
		return nil, fmt.Errorf("reading layer of %s: %w", URL(ref), err)
	}
	rc, err := blob.Compressed() // verifies the digest as it reads
	if err != nil {
		return nil, fmt.Errorf("reading layer of %s: %w", URL(ref), err)
	}
	defer rc.Close()

	files, err := extract(ctx, rc, dir, MaxPullSize)
	if err != nil {
		return nil, fmt.Errorf("extracting layer of %s: %w", URL(ref), err)
	}
	m := manifestOf(desc).Annotations
	meta := fluxoci.MetadataFromAnnotations(m)
	return &Metadata{
		URL: r.String(), Digest: ref.Context().Digest(desc.Digest.String()).String(),
		Created: meta.Created, Source: meta.Source, Revision: meta.Revision,
		Files: files, Annotations: m,
	}, nil
}

// selectLayer is the first layer of desc's manifest of mediaType, or the
// first layer when mediaType is "", as source-controller picks the layer
// of an OCIRepository; nil when there is none.
func selectLayer(desc *remote.Descriptor, mediaType string) *v1.Descriptor {
	m := manifestOf(desc)
	if m == nil {
		return nil
	}
	for _, l := range m.Layers {
		if mediaType == "" || string(l.MediaType) == mediaType {
			return &l
		}
	}
	return nil
}

// checkEmptyOrAbsent refuses a dir that exists and is not an empty directory.
func checkEmptyOrAbsent(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &FileError{Path: dir, Err: errors.New("exists and is not a directory")}
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(des) > 0 {
		return &FileError{Path: dir, Err: errors.New("directory is not empty")}
	}
	return nil
}

// extract unpacks a tar+gzip stream into dir, which must not exist or be an
// empty directory, through a temporary directory beside it that is renamed
// into place: on any error dir is left as it was. It counts the regular
// files. Entries that would land outside dir, symlinks, special files and
// streams over limit bytes unpacked (MaxPullSize; less in fuzzing) are
// refused (fluxcd/pkg/tar's Untar checks).
func extract(ctx context.Context, r io.Reader, dir string, limit int64) (int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	st, err := atomicfile.StageDir(abs)
	if err != nil {
		return 0, err
	}
	defer st.Abort() // a no-op once committed
	tmp := st.Path()
	files, last := 0, ""
	count := func(name string, fi os.FileInfo) bool {
		last = name
		if fi.Mode().IsRegular() {
			files++
		}
		return false
	}
	if err := tar.Untar(r, tmp, tar.WithMaxUntarSize(int(limit)), tar.WithFilter(count)); err != nil {
		return 0, untarError(err, tmp, abs, last)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // whatever the archive said of "."
		return 0, err
	}
	if err := ctx.Err(); err != nil { // the caller gave up meanwhile
		return 0, err
	}
	// dir was checked to be empty or missing; os.Remove fails rather than
	// delete anything written into it since.
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	if err := st.Commit(); err != nil {
		return 0, err
	}
	return files, nil
}

// untarError words an error of fluxcd/pkg/tar's Untar for the user: paths in
// the temporary directory are shown where they would have landed, and the
// entry being extracted is named when the error does not say it.
func untarError(err error, tmp, dir, entry string) error {
	msg := strings.ReplaceAll(err.Error(), tmp, dir)
	if entry != "" && !strings.Contains(msg, entry) {
		msg = fmt.Sprintf("entry %q: %s", entry, msg)
	}
	return &wordedError{msg: msg, err: err}
}

// wordedError is err with another message, still matching err for
// errors.Is and errors.As.
type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }
