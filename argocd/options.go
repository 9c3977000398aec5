package argocd

import "github.com/fluxpack/fluxpack/internal/errdefs"

// ErrInvalidOption is wrapped by the errors of bad options: the sentinel
// every fluxpack package uses.
var ErrInvalidOption = errdefs.ErrInvalidOption

// Option configures Import. Only this package implements it; an option
// given a value it cannot use makes Import fail.
type Option interface{ applyToImport(*config) error }

type config struct {
	root      string // WithRoot
	stackFile string // WithStackFile
}

type funcOption func(*config) error

func (f funcOption) applyToImport(c *config) error { return f(c) }

// WithRoot says where the Git repository of the app of apps starts: the
// folder its Applications' source.path values are relative to (default:
// the nearest directory above the Applications' folder that holds .git).
func WithRoot(dir string) Option {
	return funcOption(errdefs.NonEmpty("WithRoot", "directory", dir, func(c *config) *string { return &c.root }))
}

// WithStackFile says where Import's stack file will be written. When it is
// inside the repository (WithRoot's), the paths of the layers that read
// the app of apps' repository are written relative to the file's folder,
// as render reads them, so the stack renders where it is written (Flux,
// which reads them from the repository's root, resolves the leading ../
// there). Without it the paths are relative to the repository's root; when
// the file is outside the repository, or no root is known, they stay so
// and a Difference says it.
func WithStackFile(path string) Option {
	return funcOption(errdefs.NonEmpty("WithStackFile", "path", path, func(c *config) *string { return &c.stackFile }))
}
