package fluxrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/lint"
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
	return funcOption(func(c *config) error {
		if f == nil {
			return errdefs.InvalidOption("WithSourceFetcher: nil fetcher")
		}
		c.fetcher = f
		return nil
	})
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

// fetch fetches the source ref, defined in the tree by o, once per Read;
// a GitRepository's spec.include is laid out into a folder of its own.
func (r *reader) fetch(ref SourceRef, o *fluxbuild.Object, depth int) fetched {
	if f, ok := r.fetchedSrc[ref]; ok {
		return f
	}
	if r.fetchedSrc == nil {
		r.fetchedSrc = map[SourceRef]fetched{}
	}
	f := r.fetchOnce(ref, o, depth)
	r.fetchedSrc[ref] = f
	return f
}

func (r *reader) fetchOnce(ref SourceRef, o *fluxbuild.Object, depth int) fetched {
	var src runtime.Object
	var includes []sourcev1.GitRepositoryInclude
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		g := &sourcev1.GitRepository{}
		if err := decodeNode(o.Node, g); err != nil {
			return fetched{why: fmt.Sprintf("%s (%s:%d) cannot be read: %v", ref, o.File, o.Line, err)}
		}
		g.Namespace, includes, src = ref.Namespace, g.Spec.Include, g
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
			r.note(lint.RuleSource, o, "%s: %v", ref, err)
			return fetched{why: fmt.Sprintf("%s has no artifact: %v", ref, err)}
		}
		return fetched{why: fmt.Sprintf("%s could not be fetched: %v", ref, err)}
	}
	if r.cfg.log != nil {
		r.cfg.log.Info("fetched", "source", ref.String(), "revision", rev)
	}
	if len(includes) == 0 {
		return fetched{dir: dir, revision: rev}
	}
	if depth > 4 {
		return fetched{why: fmt.Sprintf("%s: spec.include nests too deep", ref)}
	}
	// Lay the artifact and its includes out in a folder of the Read's.
	out, err := os.MkdirTemp("", "fluxpack-include-")
	if err != nil {
		return fetched{why: fmt.Sprintf("%s: %v", ref, err)}
	}
	r.temps = append(r.temps, out)
	if err := copyTree(dir, out); err != nil {
		return fetched{why: fmt.Sprintf("%s: laying out its artifact: %v", ref, err)}
	}
	for _, inc := range includes {
		iref := SourceRef{Kind: sourcev1.GitRepositoryKind, Namespace: ref.Namespace, Name: inc.GitRepositoryRef.Name}
		io, ok := r.srcObjs[iref]
		if !ok {
			return fetched{why: fmt.Sprintf("%s includes %s, which the tree does not define", ref, iref)}
		}
		got := r.fetch(iref, io, depth+1)
		if got.dir == "" {
			return fetched{why: fmt.Sprintf("%s includes %s: %s", ref, iref, got.why)}
		}
		from, to := inc.FromPath, inc.ToPath
		if to == "" {
			to = inc.GitRepositoryRef.Name
		}
		if !filepath.IsLocal(filepath.FromSlash(to)) || (from != "" && !filepath.IsLocal(filepath.FromSlash(from))) {
			return fetched{why: fmt.Sprintf("%s: spec.include of %s leaves the artifact", ref, iref)}
		}
		dst := filepath.Join(out, filepath.FromSlash(to))
		if err := os.RemoveAll(dst); err != nil {
			return fetched{why: err.Error()}
		}
		if err := copyTree(filepath.Join(got.dir, filepath.FromSlash(from)), dst); err != nil {
			return fetched{why: fmt.Sprintf("%s: including %s: %v", ref, iref, err)}
		}
	}
	return fetched{dir: out, revision: rev}
}

// notFound reports whether err says the source has no such ref.
func notFound(err error) bool {
	var nf interface{ NotFound() bool }
	return errors.As(err, &nf) && nf.NotFound()
}

// copyTree copies the regular files, folders and links under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		t := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(t, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, t)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			fi, err := in.Stat()
			if err != nil {
				return err
			}
			out, err := os.OpenFile(t, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				_ = out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}
