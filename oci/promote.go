package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ErrNotVerified is wrapped by Promote's error when the artifact to promote
// does not verify with the key it was given.
var ErrNotVerified = errors.New("not verified")

// Promote points the tag of to (oci://host/repository:tag) at the artifact
// from names (by tag or digest): the "dev → staging → prod" move, without
// rebuilding. The source is resolved once, so the tag ends on the digest
// checked. With WithVerifier the artifact must verify first (as
// source-controller would check it), else nothing moves and the error wraps
// ErrNotVerified. Within one repository only the tag is written; into
// another repository the manifest and its blobs are copied first (mounted
// where the registry allows) with its cosign and notation signatures, and the tag last,
// so the tag never points at an incomplete artifact. When to's tag already
// holds the digest, nothing is written and Result.Pushed is false.
//
// Promote is Client.Promote with from and to parsed, on a Client of its
// own.
func Promote(ctx context.Context, from, to string, opts ...PromoteOption) (*Result, error) {
	src, err := ParseRef(from)
	if err == nil {
		var dst Ref
		if dst, err = ParseRef(to); err == nil {
			return new(Client).Promote(ctx, src, dst, opts...)
		}
	}
	return nil, fmt.Errorf("promoting %s to %s: %w", redactRef(from), redactRef(to), err)
}

// Promote points the tag of to at the artifact from names, as the
// package-level Promote describes. to must have a tag.
func (c *Client) Promote(ctx context.Context, from, to Ref, opts ...PromoteOption) (*Result, error) {
	check := func(*options) error {
		if to.tag == "" {
			return fmt.Errorf("%w: %s: promote moves a tag: give oci://HOST/REPOSITORY:TAG", ErrInvalidOption, to)
		}
		return nil
	}
	return run(ctx, c, fmt.Sprintf("promoting %s to %s", from, to), opts, PromoteOption.applyPromote, check, func(o *options) (*Result, error) {
		return promote(ctx, from.at(o).Reference(), to.at(o).Reference().(name.Tag), o)
	})
}

func promote(ctx context.Context, src name.Reference, dst name.Tag, o *options) (*Result, error) {
	ro := o.remoteOptions(ctx)
	desc, err := remote.Get(src, ro...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", URL(src), err)
	}
	digest := src.Context().Digest(desc.Digest.String())
	res := &Result{Repository: dst.Context().Name(), Tag: dst.TagStr(), Tags: []string{dst.TagStr()}, Digest: desc.Digest.String()}
	if o.verifier != nil {
		v, err := o.verifier.Verify(ctx, digest, ro)
		if err != nil {
			return nil, err
		}
		if v.Status != Verified {
			return nil, fmt.Errorf("%s is %s: %w (%s)", URL(digest), v.Status, ErrNotVerified, v.Reason)
		}
	}
	cur, err := remote.Head(dst, ro...)
	switch {
	case err == nil && cur.Digest == desc.Digest:
		return res, nil // already there
	case err != nil && !isNotFound(err):
		return nil, fmt.Errorf("reading %s: %w", URL(dst), err)
	case err == nil && !o.otherCluster:
		if err := sameCluster(desc, dst, ro); err != nil {
			return nil, err
		}
	}
	if src.Context().String() != dst.Context().String() {
		if err := copyArtifact(digest, dst.Context().Digest(desc.Digest.String()), desc, ro); err != nil {
			return nil, err
		}
	}
	if err := remote.Tag(dst, desc, ro...); err != nil {
		return nil, fmt.Errorf("tagging %s: %w", URL(dst), err)
	}
	res.Pushed = true
	return res, nil
}

// copyArtifact copies the artifact src into dst's repository by digest,
// blobs first, its notation signatures and sigstore bundles (referrers)
// and its cosign
// signature tag (sha256-<hex>.sig), which source-controller looks for in
// the repository it reads.
func copyArtifact(src, dst name.Digest, desc *remote.Descriptor, ro []remote.Option) error {
	img, err := desc.Image()
	if err != nil {
		return fmt.Errorf("reading %s: %w", URL(src), err)
	}
	if err := remote.Write(dst, img, ro...); err != nil {
		return fmt.Errorf("copying %s to %s: %w", URL(src), URL(dst), err)
	}
	if err := copyNotationSignatures(src, dst, ro); err != nil {
		return err
	}
	sigTag := strings.Replace(src.DigestStr(), ":", "-", 1) + ".sig"
	sig, err := remote.Get(src.Context().Tag(sigTag), ro...)
	switch {
	case isNotFound(err):
		return nil // unsigned
	case err != nil:
		return fmt.Errorf("reading the signature of %s: %w", URL(src), err)
	}
	sigImg, err := sig.Image()
	if err != nil {
		return fmt.Errorf("reading the signature of %s: %w", URL(src), err)
	}
	if err := remote.Write(dst.Context().Tag(sigTag), sigImg, ro...); err != nil {
		return fmt.Errorf("copying the signature of %s: %w", URL(src), err)
	}
	return nil
}

// copyNotationSignatures copies the notation signature manifests and the
// sigstore bundles (keyless cosign signatures) among src's referrers, byte
// for byte, into dst's repository, where they refer to the same digest
// (go-containerregistry adds them to the sha256-<hex> index on a registry
// without the referrers API).
func copyNotationSignatures(src, dst name.Digest, ro []remote.Option) error {
	idx, err := remote.Referrers(src, ro...)
	if err != nil {
		return fmt.Errorf("reading the signatures of %s: %w", URL(src), err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("reading the signatures of %s: %w", URL(src), err)
	}
	for _, m := range im.Manifests {
		if m.ArtifactType != NotationArtifactType && !strings.HasPrefix(m.ArtifactType, SigstoreBundleArtifactType) {
			continue
		}
		from := src.Context().Digest(m.Digest.String())
		sig, err := remote.Get(from, ro...)
		if err != nil {
			return fmt.Errorf("reading the signature %s: %w", URL(from), err)
		}
		img, err := sig.Image()
		if err != nil {
			return fmt.Errorf("reading the signature %s: %w", URL(from), err)
		}
		if err := remote.Write(dst.Context().Digest(m.Digest.String()), img, ro...); err != nil {
			return fmt.Errorf("copying the signature %s: %w", URL(from), err)
		}
	}
	return nil
}

// ClusterAnnotation names, on an artifact fleet push made, the cluster of
// the fleet it was rendered for: its variables and its source.
const ClusterAnnotation = "dev.fluxpack.cluster"

// ErrOtherCluster is wrapped by Promote's error when the artifact was
// rendered for another cluster than the one the tag serves.
var ErrOtherCluster = errors.New("the artifact was rendered for another cluster")

// WithOtherCluster lets Promote point a tag at an artifact rendered for
// another cluster of a fleet than the artifact the tag holds (both
// annotated ClusterAnnotation): a copy that hands one cluster another's
// variables and source, refused without it.
func WithOtherCluster() PromoteOption {
	return promoteOpt{func(o *options) error { o.otherCluster = true; return nil }}
}

// sameCluster refuses to move dst, which holds an artifact fleet push
// rendered for one cluster, to desc, rendered for another.
func sameCluster(desc *remote.Descriptor, dst name.Tag, ro []remote.Option) error {
	from, err := manifestAnnotation(desc.Manifest, ClusterAnnotation)
	if err != nil || from == "" {
		return nil //nolint:nilerr // an artifact without the annotation is no fleet's: nothing to compare
	}
	cur, err := remote.Get(dst, ro...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", URL(dst), err)
	}
	to, err := manifestAnnotation(cur.Manifest, ClusterAnnotation)
	if err != nil || to == "" || to == from {
		return nil //nolint:nilerr // see above
	}
	return fmt.Errorf("%w: it is cluster %q's render, and %s holds cluster %q's; promote a fleet by revision (each cluster its own artifact), or allow it with WithOtherCluster",
		ErrOtherCluster, from, URL(dst), to)
}

func manifestAnnotation(raw []byte, key string) (string, error) {
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	return m.Annotations[key], nil
}
