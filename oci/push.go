package oci

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fluxpack/fluxpack/oci/internal/regutil"
)

// Result is what Push or Tag did.
type Result struct {
	// Repository is host/repository.
	Repository string `json:"repository"`
	// Tag is the tag of the URL.
	Tag string `json:"tag"`
	// Tags are all tags that point at Digest after the call, URL's tag first.
	Tags []string `json:"tags"`
	// Digest is the manifest digest the tags point at.
	Digest string `json:"digest"`
	// Pushed is false when the tag already held the same content, so nothing
	// was uploaded and the tag did not move.
	Pushed bool `json:"pushed"`
	// Signed is true when the call wrote a signature (WithSigner): the
	// pushed artifact's, or, for content the tag already held, one that
	// was missing.
	Signed bool `json:"signed,omitempty"`
	// Source and Revision are what the artifact the tag points at records
	// (org.opencontainers.image.source and .revision, which Flux shows):
	// "" when it records none, as when the folder is not in a Git checkout
	// and neither WithSource nor WithRevision was given.
	Source   string `json:"source,omitempty"`
	Revision string `json:"revision,omitempty"`
	// TagUpdates says, for a push that found the content unchanged
	// (Pushed false), what it did to each extra tag (WithTags), in the
	// order of Tags: nothing uploaded does not mean no tag moved. A push
	// that uploaded points every tag at the new artifact and leaves it nil.
	TagUpdates []TagUpdate `json:"tagUpdates,omitempty"`
}

// TagUpdate is what a push did to one extra tag.
type TagUpdate struct {
	Tag    string    `json:"tag"`
	Change TagChange `json:"change"`
	// From is the digest the tag pointed at before it moved (TagMoved).
	From string `json:"from,omitempty"`
}

// TagChange is what happened to a tag.
type TagChange string

// What a push did to a tag (Result.TagUpdates).
const (
	TagCreated TagChange = "created" // the tag did not exist and now points at the artifact
	TagMoved   TagChange = "moved"   // the tag pointed at another artifact and now points at this one
	TagKept    TagChange = "kept"    // the tag pointed at the artifact already
)

// Ref returns host/repository@digest.
func (r *Result) Ref() string { return r.Repository + "@" + r.Digest }

// Push archives dir as a Flux artifact and pushes it to url
// (oci://host/repository:tag), unless the tag already holds the same content:
// then nothing is uploaded, the tag does not move, and Result.Pushed is false,
// even if the source or revision differ; the extra tags (WithTags) are
// still pointed at it, and Result.TagUpdates says which moved. WithForce
// pushes anyway.
//
// Blobs go first and tags last, so an interrupted push never leaves a tag
// pointing at an incomplete artifact. With WithSigner the artifact is
// signed before any tag points at it, and an unchanged tag's artifact is
// signed if the signer finds no signature of its own (Result.Signed). Failed requests are retried (see
// WithRetry); ctx bounds the whole push.
//
// Push is Client.Push with url parsed, on a Client of its own.
func Push(ctx context.Context, dir, url string, opts ...PushOption) (*Result, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("pushing %s to %s: %w", dir, redactRef(url), err)
	}
	return new(Client).Push(ctx, dir, ref, opts...)
}

// Push archives dir as a Flux artifact and pushes it to ref's tag ("latest"
// when ref has none), as the package-level Push describes.
func (c *Client) Push(ctx context.Context, dir string, ref Ref, opts ...PushOption) (*Result, error) {
	return run(ctx, c, fmt.Sprintf("pushing %s to %s", dir, ref), opts, PushOption.applyPush, nil,
		func(o *options) (*Result, error) { return push(ctx, dir, ref, o) })
}

func push(ctx context.Context, dir string, ref Ref, o *options) (*Result, error) {
	tag, err := ref.at(o).tagRef()
	if err != nil {
		return nil, err
	}
	t, err := scanTree(dir, o, o.treeCache != "")
	if err != nil {
		return nil, err
	}
	return pushTree(ctx, t, dir, tag, o)
}

// pushTree pushes the tree t of the directory dir (as the caller named it)
// to tag.
func pushTree(ctx context.Context, t *tree, dir string, tag name.Tag, o *options) (*Result, error) {
	if err := t.checkNotEmpty(dir); err != nil {
		return nil, err
	}
	ro := o.remoteOptions(ctx)

	// Ask the registry what the tag holds while the tree is hashed, and,
	// with a core to spare, compress it speculatively in a pass of its own
	// behind the hash, fed the files the hash read (each file is read once),
	// so the hash runs at reading speed and an unchanged push costs no more
	// than reading the tree. A tree in memory hashes faster than the
	// registry answers: compressing it before the answer would only cost
	// the unchanged push a core.
	getCtx, cancelGet := context.WithCancel(ctx)
	defer cancelGet()
	type got struct {
		desc *remote.Descriptor
		err  error
	}
	ch := make(chan got, 1)
	if o.force {
		ch <- got{err: errForced}
	} else {
		go func() {
			d, err := remote.Get(tag, append(slices.Clip(ro), remote.WithContext(getCtx))...)
			ch <- got{d, err}
		}()
	}
	a := &archiver{display: dir, checkSecrets: !o.allowSecrets && !t.mem}
	useCache := o.treeCache != "" && !t.mem
	var content v1.Hash
	cached := false
	if useCache && !o.force {
		content, a.streamed, cached = cachedContent(t, a.checkSecrets)
		if cached && o.logger != nil {
			o.logger.Debug("content digest from the tree cache: no file read", "dir", dir, "content", content.String())
		}
	}
	var compressing *compressing
	if !cached && !t.mem && (o.force || runtime.GOMAXPROCS(0) > 1) {
		a.handoff = newHandoff(t)
		compressing = (&archiver{display: dir}).startCompress(t, true, a.handoff)
		defer compressing.discard()
	}
	if !cached {
		var err error
		if content, err = a.contentDigest(t); err != nil {
			return nil, err
		}
		if useCache {
			if err := cacheContent(o.treeCache, t, a.checkSecrets, content, a.streamed); err != nil && o.logger != nil {
				o.logger.Debug("tree not cached", "dir", dir, "reason", err.Error())
			}
		}
	}
	g := <-ch
	var existing *remote.Descriptor
	switch {
	case g.err == nil:
		existing = g.desc
	case errors.Is(g.err, errForced) || isNotFound(g.err):
	default:
		return nil, fmt.Errorf("reading %s: %w", URL(tag), g.err)
	}
	if existing != nil {
		same, err := holdsContent(tag, existing, content, a.streamed, ro)
		if err != nil {
			return nil, err
		}
		if same {
			return unchanged(ctx, tag, existing, o, ro)
		}
	}
	if compressing == nil {
		compressing = (&archiver{display: dir}).startCompress(t, true, nil)
		defer compressing.discard()
	}
	compressed, layerDigest, compressedContent, err := compressing.wait()
	if err != nil {
		return nil, err
	}
	if compressedContent != content {
		if cached {
			dropCachedContent(o.treeCache, t)
		}
		return nil, fmt.Errorf("%s changed while being read: push again", dir)
	}
	art, err := newArtifact(dir, t, o, &memLayer{data: compressed, digest: layerDigest, content: content})
	if err != nil {
		return nil, err
	}
	res := &Result{Repository: tag.Context().Name(), Tag: tag.TagStr(), Tags: []string{tag.TagStr()}, Digest: art.Digest.String(), Pushed: true,
		Source: art.Annotations[fluxoci.SourceAnnotation], Revision: art.Annotations[fluxoci.RevisionAnnotation]}
	if o.signer == nil {
		if err := remote.Write(tag, art.Image, append(slices.Clip(ro), o.progressOption()...)...); err != nil {
			return nil, err
		}
	} else {
		// The artifact goes up under its digest, is signed, and only then
		// tagged: the tag never points at an unsigned artifact.
		d := tag.Context().Digest(art.Digest.String())
		if err := remote.Write(d, art.Image, append(slices.Clip(ro), o.progressOption()...)...); err != nil {
			return nil, err
		}
		if err := o.signer.Sign(ctx, d, ro); err != nil {
			return nil, err
		}
		res.Signed = true
		if err := remote.Tag(tag, art.Image, ro...); err != nil {
			return nil, fmt.Errorf("tagging %s: %w", URL(tag), err)
		}
	}
	for _, extra := range o.tags {
		if extra == tag.TagStr() {
			continue
		}
		if err := remote.Tag(tag.Context().Tag(extra), art.Image, ro...); err != nil {
			return nil, fmt.Errorf("tagging %s: %w", URL(tag.Context().Tag(extra)), err)
		}
		res.Tags = append(res.Tags, extra)
	}
	return res, nil
}

// errForced stands in for the tag lookup WithForce skips.
var errForced = errors.New("forced")

// unchanged reports that tag already holds the content, signs what it holds
// unless the signer finds its signature there already (WithSigner), and
// points the extra tags at it where they point elsewhere.
func unchanged(ctx context.Context, tag name.Tag, existing *remote.Descriptor, o *options, ro []remote.Option) (*Result, error) {
	res := &Result{Repository: tag.Context().Name(), Tag: tag.TagStr(), Tags: []string{tag.TagStr()}, Digest: existing.Digest.String()}
	if m, err := v1.ParseManifest(bytes.NewReader(existing.Manifest)); err == nil {
		res.Source, res.Revision = m.Annotations[fluxoci.SourceAnnotation], m.Annotations[fluxoci.RevisionAnnotation]
	}
	d := tag.Context().Digest(existing.Digest.String())
	if o.signer != nil {
		signed, err := o.signer.SignIfUnsigned(ctx, d, ro)
		if err != nil {
			return nil, err
		}
		res.Signed = signed
	}
	for _, extra := range o.tags {
		if extra == tag.TagStr() {
			continue
		}
		res.Tags = append(res.Tags, extra)
		if revisionTagWritten(extra, tag.TagStr(), existing, o) {
			res.TagUpdates = append(res.TagUpdates, TagUpdate{Tag: extra, Change: TagKept})
			continue
		}
		dst := tag.Context().Tag(extra)
		d, err := remote.Head(dst, ro...)
		if err != nil && !isNotFound(err) {
			return nil, fmt.Errorf("reading %s: %w", URL(dst), err)
		}
		u := TagUpdate{Tag: extra, Change: TagKept}
		switch {
		case err != nil:
			u.Change = TagCreated
		case d.Digest != existing.Digest:
			u.Change, u.From = TagMoved, d.Digest.String()
		}
		if u.Change != TagKept {
			if err := remote.Tag(dst, existing, ro...); err != nil {
				return nil, fmt.Errorf("tagging %s: %w", URL(dst), err)
			}
		}
		res.TagUpdates = append(res.TagUpdates, u)
	}
	return res, nil
}

// fluxLayer returns the content layer of a Flux artifact's manifest, or nil
// when desc is not a Flux artifact.
func fluxLayer(desc *remote.Descriptor) *v1.Descriptor {
	m := manifestOf(desc)
	if m == nil || m.Config.MediaType != ConfigMediaType || len(m.Layers) == 0 {
		return nil
	}
	if l := m.Layers[0]; l.MediaType == ContentMediaType {
		return &l
	}
	return nil
}

// manifestOf parses desc's manifest, or returns nil when it is not an image
// manifest.
func manifestOf(desc *remote.Descriptor) *v1.Manifest {
	if !desc.MediaType.IsImage() {
		return nil
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil
	}
	return m
}

func remoteContentDigest(desc *remote.Descriptor) string {
	if l := fluxLayer(desc); l != nil {
		return l.Annotations[ContentDigestAnnotation]
	}
	return ""
}

// holdsContent reports whether the Flux artifact desc, at tag, holds the
// tar stream of digest content and length size. An artifact fluxpack pushed
// says so in its ContentDigestAnnotation. For one pushed by another tool
// (flux push artifact), its layer is downloaded and the uncompressed stream
// hashed, no further than one byte past size: its gzip bytes depend on the
// compressor that wrote them (compress/flate's output changes between Go
// releases), so comparing layer digests would take the same content for a
// change.
func holdsContent(tag name.Tag, desc *remote.Descriptor, content v1.Hash, size int64, ro []remote.Option) (bool, error) {
	l := fluxLayer(desc)
	if l == nil {
		return false, nil
	}
	if d, ok := l.Annotations[ContentDigestAnnotation]; ok {
		return d == content.String(), nil
	}
	blob, err := remote.Layer(tag.Context().Digest(l.Digest.String()), ro...)
	if err != nil {
		return false, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	rc, err := blob.Compressed()
	if err != nil {
		return false, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		return false, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(zr, size+1))
	if err != nil {
		return false, fmt.Errorf("reading layer of %s: %w", URL(tag), err)
	}
	return n == size && hashOf(h) == content, nil
}

// isNotFound reports whether err says the tag or repository does not exist.
func isNotFound(err error) bool { return regutil.IsNotFound(err) }
