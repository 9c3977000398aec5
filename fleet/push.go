package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fluxpack/fluxpack/internal/errdefs"
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
	// Source and Revision are what the artifact records (oci.Result's):
	// "" when the fleet is not in a Git checkout and no WithSource or
	// WithRevision was given. Without a revision the artifact gets no
	// revision tag, and promotion by revision cannot find it.
	Source   string `json:"source,omitempty"`
	Revision string `json:"revision,omitempty"`

	err error
}

// Err is the cluster's error, or nil.
func (r *Result) Err() error { return r.err }

// ErrInvalidOption is wrapped by the errors of bad options: the sentinel
// every fluxpack package uses (oci.ErrInvalidOption, layering's, …).
var ErrInvalidOption = errdefs.ErrInvalidOption

// Option configures Push. Only this package implements it.
type Option interface{ apply(*config) error }

type config struct {
	jobs   int
	push   []oci.PushOption
	tree   []oci.TreeOption
	logger *slog.Logger
	client *oci.Client // shared by the clusters: one transport, one ping cache
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

// WithPushOptions passes options to every cluster's oci.PushTree
// (registry credentials, source and revision annotations, signing,
// retries, …). What of the stack's directory goes into the artifacts
// (oci.WithIgnorePaths, oci.WithAllowSecrets) is WithTreeOptions'.
func WithPushOptions(opts ...oci.PushOption) Option {
	return funcOption(func(c *config) error {
		c.push = append(c.push, opts...)
		return nil
	})
}

// WithTreeOptions passes options to the oci.ReadTree of the stack's
// directory: ignore patterns (oci.WithIgnorePaths), plaintext Secrets
// allowed (oci.WithAllowSecrets).
func WithTreeOptions(opts ...oci.TreeOption) Option {
	return funcOption(func(c *config) error {
		c.tree = append(c.tree, opts...)
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

// ErrSomeFailed is returned by Push when at least one cluster failed.
var ErrSomeFailed = errors.New("some clusters failed")

// Push renders every cluster of f and pushes its artifact to the cluster's
// URL, Jobs clusters at a time, in the fleet's order of results. The
// stack's directory is read once (oci.ReadTree); each cluster's render is
// made in memory and takes the place of the stack's renderedPath
// (oci.Tree.With), so a cluster costs its render, a hash and the
// registry's answer, and no file is written. A tag that already holds the
// same content is left alone (no blob, no tag move). A fleet with any
// problem is refused before anything is pushed; after that, one cluster's
// failure does not stop the others: its Result says failed, and Push
// returns the results and an error wrapping ErrSomeFailed and each
// failure. oci.PushTree writes the tag last, so a failed cluster's tag
// never points at an incomplete artifact.
func Push(ctx context.Context, f *Fleet, opts ...Option) ([]Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	sh, err := newShipper(f, cfg)
	if err != nil {
		return nil, err
	}
	clusters := f.Clusters()
	results := make([]Result, len(clusters))
	for i, name := range clusters {
		results[i].Cluster = name
		results[i].URL, _ = f.Artifact(name) // checked by Check
	}
	// Every cluster's artifact is of one source revision, read once; each
	// is tagged with it too (oci.RevisionTag), for promotion by revision.
	revision, err := oci.ArtifactRevision(sh.stackDir, append(slices.Clone(cfg.push), oci.WithGitDir(sh.stackDir))...)
	if err != nil {
		return nil, err
	}
	// Jobs workers take the clusters in order: memory follows Jobs, not
	// the fleet's size (no goroutine waits per cluster).
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(cfg.jobs, len(clusters)) {
		wg.Go(func() {
			for i := range next {
				r := &results[i]
				if err := ctx.Err(); err != nil {
					r.fail(err)
					continue
				}
				if err := sh.pushResult(ctx, r, revision); err != nil {
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

// newConfig applies opts to Push's defaults.
func newConfig(opts []Option) (*config, error) {
	cfg := &config{jobs: DefaultJobs, logger: slog.New(slog.DiscardHandler), client: new(oci.Client)}
	if err := errdefs.ApplyOptions(cfg, opts, Option.apply, "nil Option"); err != nil {
		return nil, err
	}
	return cfg, nil
}

// shipper renders and pushes clusters of a checked fleet: what Push and
// Promote's render share.
type shipper struct {
	f        *Fleet
	cfg      *config
	stackDir string // the stack's directory, in the Git checkout
	rendered string // the stack's renderedPath
	base     *baseTree
}

// newShipper checks f and prepares to read the stack's directory once.
func newShipper(f *Fleet, cfg *config) (*shipper, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	inputs, err := f.Inputs()
	if err != nil {
		return nil, err
	}
	// Every cluster runs the fleet's one stack: one directory, one
	// renderedPath.
	stackDir, rendered, err := f.StackDir(f.Clusters()[0])
	if err != nil {
		return nil, err
	}
	return &shipper{f: f, cfg: cfg, stackDir: stackDir, rendered: rendered, base: &baseTree{dir: stackDir, inputs: inputs, opts: cfg.tree}}, nil
}

// pushResult pushes r's cluster to r.URL, tagged with the revision's tag
// too when there is a revision, and fills r in.
func (s *shipper) pushResult(ctx context.Context, r *Result, revision string) error {
	var tags []string
	if revision != "" {
		tag, ok := urlTag(r.URL)
		if !ok {
			return fmt.Errorf("%s: want a tag", oci.RedactURL(r.URL))
		}
		tags = append(tags, oci.RevisionTag(tag, revision))
	}
	res, err := s.push(ctx, r.Cluster, r.URL, revision, tags...)
	if err != nil {
		return err
	}
	r.Digest, r.Status, r.Source, r.Revision = res.Digest, Unchanged, res.Source, res.Revision
	if res.Pushed {
		r.Status = Pushed
	}
	return nil
}

func (r *Result) fail(err error) {
	r.Status, r.Digest, r.err, r.Error = Failed, "", err, err.Error()
}

// baseTree reads the stack's directory once, less the fleet's inputs, for
// every cluster to share: the first cluster to ask reads it, the others
// wait for it.
type baseTree struct {
	dir    string
	inputs []string // absolute paths of files never to push
	opts   []oci.TreeOption
	once   sync.Once
	tree   *oci.Tree
	err    error
}

func (b *baseTree) get() (*oci.Tree, error) {
	b.once.Do(func() {
		t, err := oci.ReadTree(b.dir, b.opts...)
		if err != nil {
			b.err = err
			return
		}
		abs, err := filepath.Abs(b.dir)
		if err != nil {
			b.err = err
			return
		}
		var inside []string
		for _, p := range b.inputs {
			if rel, err := filepath.Rel(abs, p); err == nil && filepath.IsLocal(rel) {
				inside = append(inside, filepath.ToSlash(rel))
			}
		}
		b.tree = t.Without(inside...)
	})
	return b.tree, b.err
}

// push renders the cluster in memory into its stack's tree, at the
// stack's renderedPath, and pushes it to url (and tags), recording
// revision when it is not "".
func (s *shipper) push(ctx context.Context, cluster, url, revision string, tags ...string) (*oci.Result, error) {
	tree, err := s.base.get()
	if err != nil {
		return nil, err
	}
	files, err := ClusterFiles(s.f, cluster)
	if err != nil {
		return nil, err
	}
	render := make(map[string][]byte, len(files))
	for _, file := range files {
		render[file.Path] = file.Data
	}
	tree, err = tree.With(path.Clean(s.rendered), render)
	if err != nil {
		return nil, err
	}
	// The annotations come from the checkout holding the stack.
	ref, err := oci.ParseRef(url)
	if err != nil {
		return nil, err
	}
	opts := append(slices.Clone(s.cfg.push), oci.WithGitDir(s.stackDir), oci.WithAnnotations(map[string]string{oci.ClusterAnnotation: cluster}))
	if revision != "" {
		opts = append(opts, oci.WithRevision(revision))
	}
	if len(tags) > 0 {
		opts = append(opts, oci.WithTags(tags...))
	}
	return s.cfg.client.PushTree(ctx, tree, ref, opts...)
}

// urlTag returns the tag of oci://host/repository:tag.
func urlTag(url string) (string, bool) {
	i := strings.LastIndex(url, ":")
	if i < 0 || i < strings.LastIndex(url, "/") || strings.Contains(url, "@") {
		return "", false
	}
	return url[i+1:], true
}
