package fluxbuild

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// Snapshot is what the builds that share it have learnt of the disk: the
// answers a cached build's reads get when they are asked again before it
// is taken (WithCache), the .sourceignore files, and where symbolic links
// lead. Each is asked of the disk once, then answered from the snapshot.
// The layers of one repository ask much the same: the components and
// folders they share, the .sourceignore files above them all.
//
// It is for builds of files that do not change while they run, as the
// layers of one read of a repository: a file changed after a build that
// shares the snapshot asked about it is not seen by the next one. Use a
// new Snapshot for each read. It is safe for concurrent use.
type Snapshot struct {
	answers  sync.Map // replay's question (op, root, path) → its answer
	ignores  sync.Map // folder → ignoreRead of its .sourceignore
	resolved sync.Map // path → resolvedPath (filepath.EvalSymlinks)
}

// NewSnapshot returns an empty Snapshot.
func NewSnapshot() *Snapshot { return &Snapshot{} }

// WithSnapshot has Build take what it asks the disk from s, and keep
// there what s has not been asked yet.
func WithSnapshot(s *Snapshot) Option {
	return funcOption(errdefs.NonNil("WithSnapshot", "snapshot", s, func(c *config) **Snapshot { return &c.snapshot }))
}

type ignoreRead struct {
	patterns []gitignore.Pattern
	err      error
}

type resolvedPath struct {
	path string
	err  error
}

// readIgnoreFile is sourceignore.ReadIgnoreFile of dir's .sourceignore,
// with the domain of dir, asked once per snapshot. The patterns returned
// are shared: append them to another slice, never in place.
func (s *Snapshot) readIgnoreFile(dir string) ([]gitignore.Pattern, error) {
	read := func() ([]gitignore.Pattern, error) {
		return sourceignore.ReadIgnoreFile(filepath.Join(dir, sourceignore.IgnoreFile), strings.Split(dir, string(filepath.Separator)))
	}
	if s == nil {
		return read()
	}
	if v, ok := s.ignores.Load(dir); ok {
		r := v.(ignoreRead)
		return r.patterns, r.err
	}
	ps, err := read()
	s.ignores.Store(dir, ignoreRead{ps, err})
	return ps, err
}

// evalSymlinks is filepath.EvalSymlinks(p), asked once per snapshot.
func (s *Snapshot) evalSymlinks(p string) (string, error) {
	if s == nil {
		return filepath.EvalSymlinks(p)
	}
	if v, ok := s.resolved.Load(p); ok {
		r := v.(resolvedPath)
		return r.path, r.err
	}
	r, err := filepath.EvalSymlinks(p)
	s.resolved.Store(p, resolvedPath{r, err})
	return r, err
}

// answer returns the answer to replay's question key, asking ask once per
// snapshot; ok false (a question with no answer to keep) is asked again.
func (s *Snapshot) answer(key string, ask func() (string, bool)) (string, bool) {
	if s == nil {
		return ask()
	}
	if v, ok := s.answers.Load(key); ok {
		return v.(string), true
	}
	a, ok := ask()
	if ok {
		s.answers.Store(key, a)
	}
	return a, ok
}
