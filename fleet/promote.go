package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/oci"
)

// ErrNoRevision is wrapped by Promote's error when the cluster promoted
// from has no revision recorded, or the cluster promoted to has no
// artifact of that revision.
var ErrNoRevision = errors.New("no artifact of the revision")

// PromoteOptions are the registry options of Promote: Read for the
// manifests it reads (credentials, TLS), Promote for the tag it moves
// (the same, and the keys the artifact must verify with).
type PromoteOptions struct {
	Read    []oci.ListOption
	Promote []oci.PromoteOption
}

// Promote points cluster's tag at cluster's own artifact of the source
// revision that cluster from's artifact holds: promotion by revision, not
// by artifact, since each cluster's artifact carries its own render (its
// OCIRepository, its variables) and must never be handed to another
// cluster. Push tags every cluster's artifact with its revision
// (oci.RevisionTag); when cluster has no artifact of that revision,
// Promote says so (ErrNoRevision) and moves nothing.
func Promote(ctx context.Context, f *layering.Fleet, cluster, from string, opts PromoteOptions) (*oci.Result, error) {
	to, err := f.Artifact(cluster)
	if err != nil {
		return nil, err
	}
	src, err := f.Artifact(from)
	if err != nil {
		return nil, err
	}
	info, err := oci.Describe(ctx, src, opts.Read...)
	if err != nil {
		return nil, fmt.Errorf("promoting cluster %q from %q: %w", cluster, from, err)
	}
	if info.Revision == "" {
		return nil, fmt.Errorf("promoting cluster %q from %q: %s records no source revision (push the fleet from a Git checkout, or with WithRevision): %w", cluster, from, oci.RedactURL(src), ErrNoRevision)
	}
	tag, ok := urlTag(to)
	if !ok {
		return nil, fmt.Errorf("promoting cluster %q: %s: want a tag", cluster, oci.RedactURL(to))
	}
	own := to[:len(to)-len(tag)] + oci.RevisionTag(tag, info.Revision)
	if _, err := oci.Describe(ctx, own, opts.Read...); err != nil {
		if errors.Is(err, oci.ErrNoArtifact) {
			return nil, fmt.Errorf("promoting cluster %q from %q: cluster %q has no artifact of revision %s, which %q runs (no %s): push the fleet at that revision first; nothing moved: %w",
				cluster, from, cluster, info.Revision, from, oci.RedactURL(own), ErrNoRevision)
		}
		return nil, fmt.Errorf("promoting cluster %q from %q: %w", cluster, from, err)
	}
	return oci.Promote(ctx, own, to, opts.Promote...)
}
