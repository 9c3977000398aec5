package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/oci"
)

// Status is what a push did for one cluster.
type Status string

// The statuses of a cluster's push.
const (
	Pushed    Status = "pushed"    // the tag moved to a new artifact
	Unchanged Status = "unchanged" // the tag held the same content: nothing uploaded, the tag did not move
	Failed    Status = "failed"    // see Result.Error; the tag is where it was
)

// Result is one cluster's push.
type Result struct {
	Cluster string `json:"cluster"`
	// URL is where the cluster's artifact goes (oci://host/repository:tag).
	URL    string `json:"url"`
	Status Status `json:"status"`
	// Digest is the manifest digest the tag points at (not set on failure).
	Digest string `json:"digest,omitempty"`
	// Error says why the push failed.
	Error string `json:"error,omitempty"`

	err error
}

// Err is the cluster's error, or nil.
func (r *Result) Err() error { return r.err }

// ErrInvalidOption is wrapped by the errors of bad options.
var ErrInvalidOption = errors.New("invalid option")

// Option configures Push. Only this package implements it.
type Option interface{ apply(*config) error }

type config struct {
	jobs   int
	push   []oci.PushOption
	logger *slog.Logger
	tmp    string
}

type funcOption func(*config) error

func (f funcOption) apply(c *config) error { return f(c) }

// DefaultJobs is how many clusters Push works on at once by default.
const DefaultJobs = 4

// Jobs bounds how many clusters are rendered and pushed at once (n ≥ 1):
// memory grows with it, not with the fleet's size.
func Jobs(n int) Option {
	return funcOption(func(c *config) error {
		if n < 1 {
			return errdefs.Kind(ErrInvalidOption, "Jobs(%d): want at least 1", n)
		}
		c.jobs = n
		return nil
	})
}

// WithPushOptions passes options to every cluster's oci.Push (registry
// credentials, source and revision annotations, retries, …).
func WithPushOptions(opts ...oci.PushOption) Option {
	return funcOption(func(c *config) error {
		c.push = append(c.push, opts...)
		return nil
	})
}

// WithLogger logs each cluster's result as it ends.
func WithLogger(l *slog.Logger) Option {
	return funcOption(func(c *config) error {
		if l == nil {
			return errdefs.Kind(ErrInvalidOption, "WithLogger: nil logger")
		}
		c.logger = l
		return nil
	})
}

// WithTempDir renders the clusters' artifacts under dir instead of the
// system's temporary directory.
func WithTempDir(dir string) Option {
	return funcOption(func(c *config) error {
		c.tmp = dir
		return nil
	})
}

// ErrSomeFailed is returned by Push when at least one cluster failed.
var ErrSomeFailed = errors.New("some clusters failed")

// Push renders every cluster of f and pushes its artifact to the cluster's
// URL with oci.Push, Jobs clusters at a time, in the fleet's order of
// results. A tag that already holds the same content is left alone (no
// blob, no tag move). A fleet with any problem is refused before anything
// is pushed; after that, one cluster's failure does not stop the others: its
// Result says failed, and Push returns the results and an error wrapping
// ErrSomeFailed and each failure. oci.Push writes the tag last, so a failed
// cluster's tag never points at an incomplete artifact.
func Push(ctx context.Context, f *layering.Fleet, opts ...Option) ([]Result, error) {
	cfg := &config{jobs: DefaultJobs, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o == nil {
			return nil, errdefs.Kind(ErrInvalidOption, "nil Option")
		}
		if err := o.apply(cfg); err != nil {
			return nil, err
		}
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	inputs, err := f.Inputs()
	if err != nil {
		return nil, err
	}
	clusters := f.Clusters()
	results := make([]Result, len(clusters))
	for i, name := range clusters {
		results[i].Cluster = name
		results[i].URL, _ = f.Artifact(name) // checked by Check
	}
	// Jobs workers take the clusters in order: memory follows Jobs, not
	// the fleet's size (no goroutine waits per cluster).
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(cfg.jobs, len(clusters)) {
		wg.Go(func() {
			var wt workTree
			defer wt.remove()
			for i := range next {
				r := &results[i]
				if err := ctx.Err(); err != nil {
					r.fail(err)
					continue
				}
				if err := pushCluster(ctx, f, r, inputs, cfg, &wt); err != nil {
					r.fail(err)
					cfg.logger.Warn("push failed", "cluster", r.Cluster, "url", oci.RedactURL(r.URL), "error", r.Error)
					continue
				}
				cfg.logger.Info(string(r.Status), "cluster", r.Cluster, "url", oci.RedactURL(r.URL), "digest", r.Digest)
			}
		})
	}
	for i := range clusters {
		next <- i
	}
	close(next)
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %s: %w", r.Cluster, oci.RedactURL(r.URL), r.err))
		}
	}
	if len(errs) > 0 {
		return results, fmt.Errorf("%w: %w", ErrSomeFailed, errors.Join(errs...))
	}
	return results, nil
}

func (r *Result) fail(err error) {
	r.Status, r.Digest, r.err, r.Error = Failed, "", err, err.Error()
}

// workTree is one worker's copy of the stack's tree (less the fleet's
// inputs and the rendered folder), made once and reused for each cluster
// the worker pushes: only the cluster's render, at the stack's
// renderedPath, is written per cluster (RenderCluster replaces the
// previous cluster's whole folder). Copying the tree for every cluster
// cost more than the rest of an unchanged push.
type workTree struct {
	stackDir, rendered string // what root is a copy of
	tmp                string // the temporary directory holding root
	root               string // "" until made
}

func (w *workTree) remove() {
	if w.tmp != "" {
		os.RemoveAll(w.tmp)
	}
	*w = workTree{}
}

// forStack returns the tree for a cluster whose stack lives in stackDir and
// renders at rendered, copying it unless it is the one the worker holds.
func (w *workTree) forStack(stackDir, rendered string, inputs []string, cfg *config) (string, error) {
	if w.root != "" && w.stackDir == stackDir && w.rendered == rendered {
		return w.root, nil
	}
	w.remove()
	tmp, err := os.MkdirTemp(cfg.tmp, "fluxpack-fleet-")
	if err != nil {
		return "", err
	}
	root := filepath.Join(tmp, "tree")
	if err := copyTree(stackDir, root, rendered, inputs); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	*w = workTree{stackDir: stackDir, rendered: rendered, tmp: tmp, root: root}
	return root, nil
}

// pushCluster lays out the cluster's artifact in the worker's tree (the
// stack's tree less the fleet's inputs, plus the cluster's render at the
// stack's renderedPath) and pushes it.
func pushCluster(ctx context.Context, f *layering.Fleet, r *Result, inputs []string, cfg *config, wt *workTree) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stackDir, rendered, err := f.StackDir(r.Cluster)
	if err != nil {
		return err
	}
	tree, err := wt.forStack(stackDir, rendered, inputs, cfg)
	if err != nil {
		return err
	}
	renderedDir := filepath.Clean(filepath.Join(tree, filepath.FromSlash(rendered)))
	if _, err := f.RenderCluster(r.Cluster, renderedDir); err != nil {
		return err
	}
	// The annotations come from the checkout holding the stack, not from
	// the copy.
	res, err := oci.Push(ctx, tree, r.URL, append(slices.Clone(cfg.push), oci.WithGitDir(stackDir))...)
	if err != nil {
		return err
	}
	r.Digest, r.Status = res.Digest, Unchanged
	if res.Pushed {
		r.Status = Pushed
	}
	return nil
}

// copyTree copies the regular files and directories of src to dst, less
// the rendered folder (each cluster renders its own) and the inputs.
// Symbolic links are copied as links (oci's tree rules then apply).
func copyTree(src, dst, rendered string, inputs []string) error {
	skip := filepath.Clean(filepath.Join(src, filepath.FromSlash(rendered)))
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filepath.Clean(p) == skip && p != src {
			return fs.SkipDir
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if slices.Contains(inputs, filepath.Join(absSrc, rel)) {
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
}
