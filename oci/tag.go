package oci

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Tag points tags at the artifact url names (by tag or digest). The
// artifact's manifest is read once, so every tag ends on the same digest even
// if url's tag moves meanwhile.
//
// Tag is Client.Tag with url parsed, on a Client of its own.
func Tag(ctx context.Context, url string, tags []string, opts ...TagOption) (*Result, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("tagging %s: %w", redactRef(url), err)
	}
	return new(Client).Tag(ctx, ref, tags, opts...)
}

// Tag points tags at what ref names, as the package-level Tag describes.
func (c *Client) Tag(ctx context.Context, r Ref, tags []string, opts ...TagOption) (*Result, error) {
	o, err := collect(c, opts, func(x TagOption, o *options) error { return x.applyTag(o) })
	if err == nil && len(tags) == 0 {
		err = errors.New("no tags given")
	}
	if err == nil {
		err = WithTags(tags...).applyPush(o)
	}
	if err != nil {
		return nil, fmt.Errorf("tagging %s: %w", r, err)
	}
	ref := r.at(o).Reference()
	ro := o.remoteOptions(ctx)
	desc, err := remote.Get(ref, ro...)
	if err != nil {
		return nil, fmt.Errorf("tagging %s: reading it: %w", URL(ref), err)
	}
	res := &Result{Repository: ref.Context().Name(), Digest: desc.Digest.String()}
	for _, t := range o.tags {
		dst := ref.Context().Tag(t)
		if err := remote.Tag(dst, desc, ro...); err != nil {
			return nil, fmt.Errorf("tagging %s as %s: %w", URL(ref), URL(dst), err)
		}
		res.Tags = append(res.Tags, t)
	}
	res.Tag = res.Tags[0]
	res.Pushed = true
	return res, nil
}
