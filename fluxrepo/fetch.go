package fluxrepo

import (
	"context"
	"errors"
	"fmt"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// SourceFetcher fetches the artifact of a source the repository names but
// does not hold, as source-controller would: package sources' Fetcher is
// one (fluxpack's --sources online).
type SourceFetcher interface {
	// FetchSource fetches src, a *sourcev1.GitRepository or
	// *sourcev1.OCIRepository of the tree, and returns the directory
	// holding its files, which the caller does not change, and the
	// revision source-controller would record. An error with a method
	// NotFound() bool returning true says the source was reached and has
	// no such ref, version or layer: source-controller would fail the
	// object the same way.
	FetchSource(ctx context.Context, src runtime.Object) (dir, revision string, err error)
}

// WithSourceFetcher lets Read fetch with f the GitRepositories and
// OCIRepositories the tree defines that no WithSource maps, instead of
// leaving their layers unavailable. A source f cannot reach stays
// unavailable, with the reason; one that has no such ref is a `source`
// finding, as it fails in the cluster.
func WithSourceFetcher(f SourceFetcher) Option {
	return funcOption(errdefs.NonNil("WithSourceFetcher", "fetcher", f, func(c *config) *SourceFetcher { return &c.fetcher }))
}

// fetched is what fetching one source gave.
type fetched struct {
	dir, revision string
	why           string // when dir is ""
}

// fetchable reports whether a fetcher can fetch ref's kind.
func fetchable(ref SourceRef) bool {
	return ref.Kind == sourcev1.GitRepositoryKind || ref.Kind == sourcev1.OCIRepositoryKind
}

// fetch fetches the source ref, defined in the tree by o, once per Read.
// Its spec.include is artifactOf's.
func (r *reader) fetch(ref SourceRef, o *fluxbuild.Object) fetched {
	if f, ok := r.fetchedSrc[ref]; ok {
		return f
	}
	if r.fetchedSrc == nil {
		r.fetchedSrc = map[SourceRef]fetched{}
	}
	f := r.fetchOnce(ref, o)
	r.fetchedSrc[ref] = f
	return f
}

func (r *reader) fetchOnce(ref SourceRef, o *fluxbuild.Object) fetched {
	var src runtime.Object
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		g := &sourcev1.GitRepository{}
		if err := decodeNode(o.Node, g); err != nil {
			return fetched{why: fmt.Sprintf("%s (%s:%d) cannot be read: %v", ref, o.File, o.Line, err)}
		}
		g.Namespace, src = ref.Namespace, g
	default:
		oc := &sourcev1.OCIRepository{}
		if err := decodeNode(o.Node, oc); err != nil {
			return fetched{why: fmt.Sprintf("%s (%s:%d) cannot be read: %v", ref, o.File, o.Line, err)}
		}
		oc.Namespace, src = ref.Namespace, oc
	}
	dir, rev, err := r.cfg.fetcher.FetchSource(r.ctx, src)
	if err != nil {
		if notFound(err) {
			r.note(NoteSource, o, "%s: %v", ref, err)
			return fetched{why: fmt.Sprintf("%s has no artifact: %v", ref, err)}
		}
		return fetched{why: fmt.Sprintf("%s could not be fetched: %v", ref, err)}
	}
	if r.cfg.log != nil {
		r.cfg.log.Info("fetched", "source", ref.String(), "revision", rev)
	}
	return fetched{dir: dir, revision: rev}
}

// notFound reports whether err says the source has no such ref.
func notFound(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}
