package oci

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DiffStatus says how a directory compares with what a tag holds.
type DiffStatus string

// The answers of Diff.
const (
	Identical DiffStatus = "identical" // the tag holds the same content
	Differs   DiffStatus = "differs"   // the tag holds other content
	Missing   DiffStatus = "missing"   // the tag does not exist
)

// DiffResult is the answer of Diff.
type DiffResult struct {
	Status DiffStatus `json:"status"`
	// Digest is the manifest digest the tag points at, unless Missing.
	Digest string `json:"digest,omitempty"`
	// Added, Removed and Modified list archive paths (directories end in
	// "/") that the directory adds, lacks, or has with other content or mode,
	// compared with the tag. They are empty unless Status is Differs.
	Added    []string `json:"added,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Modified []string `json:"modified,omitempty"`
}

// Diff compares the artifact that dir would make with what url's tag holds,
// and lists the files that differ. An error means the comparison could not be
// made (bad directory, unreachable registry, refused credentials); a tag that
// does not exist is not an error but Status Missing.
//
// Diff is Client.Diff with url parsed, on a Client of its own.
func Diff(ctx context.Context, dir, url string, opts ...DiffOption) (*DiffResult, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", dir, redactRef(url), err)
	}
	return new(Client).Diff(ctx, dir, ref, opts...)
}

// Diff compares the artifact dir would make with what ref's tag holds, as
// the package-level Diff describes.
func (c *Client) Diff(ctx context.Context, dir string, ref Ref, opts ...DiffOption) (*DiffResult, error) {
	return run(ctx, c, fmt.Sprintf("comparing %s with %s", dir, ref), opts, DiffOption.applyDiff, nil,
		func(o *options) (*DiffResult, error) { return diff(ctx, dir, ref, o) })
}

// fileSum is what Diff compares of one archive entry.
type fileSum struct {
	mode int64
	sum  [sha256.Size]byte
}

func diff(ctx context.Context, dir string, ref Ref, o *options) (*DiffResult, error) {
	tag, err := ref.at(o).tagRef()
	if err != nil {
		return nil, err
	}
	t, err := scanTree(dir, o, false)
	if err != nil {
		return nil, err
	}
	local := map[string]fileSum{}
	for _, e := range t.entries {
		if e.dir && e.name != "." {
			local[e.name+"/"] = fileSum{mode: 0o755}
		}
	}
	a := &archiver{display: dir, checkSecrets: !o.allowSecrets, onFile: func(name string, mode int64, data []byte) {
		local[name] = fileSum{mode: mode, sum: sha256.Sum256(data)}
	}}
	content, err := a.contentDigest(t)
	if err != nil {
		return nil, err
	}

	ro := o.remoteOptions(ctx)
	desc, err := remote.Get(tag, ro...)
	if isNotFound(err) {
		return &DiffResult{Status: Missing}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", URL(tag), err)
	}
	res := &DiffResult{Status: Identical, Digest: desc.Digest.String()}
	if remoteContentDigest(desc) == content.String() {
		return res, nil
	}
	layer := fluxLayer(desc)
	if layer == nil {
		return nil, fmt.Errorf("%s is not a Flux artifact (want config %s and layer %s)", URL(tag), ConfigMediaType, ContentMediaType)
	}
	blob, err := remote.Layer(tag.Context().Digest(layer.Digest.String()), ro...)
	if err != nil {
		return nil, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	rc, err := blob.Compressed()
	if err != nil {
		return nil, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	defer rc.Close()
	remoteSums, err := sumTar(rc, MaxPullSize)
	if err != nil {
		return nil, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	for _, name := range slices.Sorted(maps.Keys(local)) {
		r, ok := remoteSums[name]
		switch {
		case !ok:
			res.Added = append(res.Added, name)
		case r != local[name]:
			res.Modified = append(res.Modified, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(remoteSums)) {
		if _, ok := local[name]; !ok {
			res.Removed = append(res.Removed, name)
		}
	}
	if len(res.Added)+len(res.Removed)+len(res.Modified) > 0 {
		res.Status = Differs
	}
	return res, nil
}

// sumTar hashes every entry of a tar+gzip stream, with modes reduced to
// what fluxpack archives (0755 for executables, else 0644). Like Pull, it
// refuses streams over limit bytes unpacked (MaxPullSize; less in fuzzing).
func sumTar(r io.Reader, limit int64) (map[string]fileSum, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	sums := map[string]fileSum{}
	var size int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return sums, nil
		}
		if err != nil {
			return nil, err
		}
		if size += max(h.Size, 0); size > limit {
			return nil, fmt.Errorf("entry %q: %w: over %d bytes unpacked (oci.MaxPullSize)", h.Name, ErrTooBig, limit)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			name := path.Clean(h.Name)
			if name != "." {
				sums[name+"/"] = fileSum{mode: 0o755}
			}
		case tar.TypeReg:
			hs := sha256.New()
			if _, err := io.Copy(hs, tr); err != nil {
				return nil, err
			}
			var s fileSum
			copy(s.sum[:], hs.Sum(nil))
			s.mode = normalMode(fs.FileMode(h.Mode))
			sums[path.Clean(h.Name)] = s
		}
	}
}
