package oci

import (
	"fmt"
	"time"

	fluxoci "github.com/fluxcd/pkg/oci"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types and annotations of a Flux artifact, as fluxcd/pkg/oci writes
// them.
const (
	ConfigMediaType  = types.MediaType("application/vnd.cncf.flux.config.v1+json")
	ContentMediaType = types.MediaType("application/vnd.cncf.flux.content.v1.tar+gzip")

	// ContentDigestAnnotation, on the layer's descriptor, holds the sha256 of
	// the layer's uncompressed tar stream. Push compares it to tell unchanged
	// content without compressing anything; Flux ignores it.
	ContentDigestAnnotation = "dev.fluxpack.content.digest"
)

// DefaultCreated is the creation time of an artifact when neither
// WithCreated nor a Git commit time gives one: the Unix epoch, as
// `flux push artifact --reproducible` uses.
func DefaultCreated() time.Time { return time.Unix(0, 0).UTC() }

// Artifact is a Flux artifact built in memory, ready to push.
type Artifact struct {
	// Image is the OCI image: Flux's config and one tar+gzip layer.
	Image v1.Image
	// Digest is the manifest's digest: what a tag points at and what
	// OCIRepository reports as <tag>@<digest>.
	Digest v1.Hash
	// LayerDigest is the digest of the compressed layer: the tar stream
	// gzipped by the klauspost/compress version go.mod pins, whatever Go
	// release built fluxpack. It equals what `flux build artifact` makes
	// only when that flux's compressor writes the same bytes (a flux built
	// with Go 1.27).
	LayerDigest v1.Hash
	// ContentDigest is the digest of the uncompressed tar stream. For a
	// tree whose modes are already normal, the stream is byte for byte the
	// one `flux build artifact` makes.
	ContentDigest v1.Hash
	// Files counts the regular files in the layer.
	Files int
	// Annotations are the manifest's annotations.
	Annotations map[string]string
}

// Build archives dir as a Flux artifact without sending anything. The same
// tree with the same options gives the same digests on any machine, umask or
// time zone.
func Build(dir string, opts ...BuildOption) (*Artifact, error) {
	o, err := collect(nil, opts, func(x BuildOption, o *options) error { return x.applyBuild(o) })
	if err != nil {
		return nil, fmt.Errorf("building artifact from %s: %w", dir, err)
	}
	t, err := scanTree(dir, o, false)
	if err != nil {
		return nil, fmt.Errorf("building artifact from %s: %w", dir, err)
	}
	a := &archiver{display: dir, checkSecrets: !o.allowSecrets}
	layer, err := a.compress(t)
	if err != nil {
		return nil, fmt.Errorf("building artifact from %s: %w", dir, err)
	}
	art, err := newArtifact(dir, t, o, layer)
	if err != nil {
		return nil, fmt.Errorf("building artifact from %s: %w", dir, err)
	}
	return art, nil
}

// newArtifact assembles the image around a compressed layer of t.
func newArtifact(dir string, t *tree, o *options, layer *memLayer) (*Artifact, error) {
	annotations, created := o.metadata(dir)
	img, err := assemble(layer, annotations, created)
	if err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	files := 0
	for _, e := range t.entries {
		if !e.dir {
			files++
		}
	}
	return &Artifact{Image: img, Digest: d, LayerDigest: layer.digest, ContentDigest: layer.content, Files: files, Annotations: annotations}, nil
}

// assemble builds the image exactly as fluxcd/pkg/oci's Push does (same
// config blob, media types and annotations), plus the content digest on the
// layer's descriptor.
func assemble(layer *memLayer, annotations map[string]string, created time.Time) (v1.Image, error) {
	cfg, err := empty.Image.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg.Created = v1.Time{Time: created}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	img = mutate.Annotations(img, annotations).(v1.Image)
	return mutate.Append(img, mutate.Addendum{
		Layer:       layer,
		Annotations: map[string]string{ContentDigestAnnotation: layer.content.String()},
	})
}

// metadata resolves the manifest annotations and the creation time.
func (o *options) metadata(dir string) (map[string]string, time.Time) {
	source, revision, created := o.source, o.revision, o.created
	if o.gitDefaults {
		if o.gitDir != "" {
			dir = o.gitDir
		}
		g := readGit(dir, revision)
		if source == "" {
			source = g.source
		}
		if revision == "" {
			revision = g.revision
		}
		if created == nil && g.commitTime != nil {
			created = g.commitTime
		}
	}
	t := DefaultCreated()
	if created != nil {
		t = *created
	}
	annotations := map[string]string{fluxoci.CreatedAnnotation: t.Format(time.RFC3339)}
	if source != "" {
		annotations[fluxoci.SourceAnnotation] = source
	}
	if revision != "" {
		annotations[fluxoci.RevisionAnnotation] = revision
	}
	for k, v := range o.annotations {
		annotations[k] = v
	}
	return annotations, t
}
