package fluxbuild

import (
	"log/slog"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// ErrInvalidOption is wrapped by the error of an option given a value it
// cannot use.
var ErrInvalidOption = errdefs.ErrInvalidOption

// Option configures Build. Only this package implements it; an option
// given a value it cannot use makes Build fail with ErrInvalidOption.
type Option interface{ applyToBuild(*config) error }

type config struct {
	log *slog.Logger // what a build leaves out that Flux leaves out too, or nil
	// needs, when set, says which objects are read whole (WithIdentityOnly).
	needs func(apiVersion, kind string) bool
	// cacheDir, when set, keeps kustomize's builds there (WithCache).
	cacheDir string
	// snapshot, when set, answers what the disk answered before
	// (WithSnapshot).
	snapshot *Snapshot
}

type funcOption func(*config) error

func (f funcOption) applyToBuild(c *config) error { return f(c) }

// WithLogger logs, as warnings, what Build leaves out of a source because
// Flux leaves it out too: a symbolic link whose target does not exist, and
// every symbolic link of a packed source (source-controller packs regular
// files only).
func WithLogger(l *slog.Logger) Option {
	return funcOption(errdefs.NonNil("WithLogger", "logger", l, func(c *config) **slog.Logger { return &c.log }))
}

// WithIdentityOnly reads an object of a plain directory (one Flux's
// generator lists without anything for kustomize to transform) for its
// identity only when needs(apiVersion, kind) is false: its Node holds its
// apiVersion, kind and metadata, decoded as the whole document would
// decode them, and IdentityOnly is set. Its document holds no $ (no
// ${var} for postBuild), it is not a List, and the rest of it is neither
// decoded nor checked: a YAML error there, which a whole build reports,
// goes unseen. This is for a caller that needs to know what a layer
// applies, not its content: a review reads the layers a change leaves
// alone (the same on both sides) so, at a fraction of the cost. Objects
// kustomize builds are read whole.
func WithIdentityOnly(needs func(apiVersion, kind string) bool) Option {
	return funcOption(func(c *config) error {
		if needs == nil {
			return errdefs.InvalidOption("WithIdentityOnly: nil needs")
		}
		c.needs = needs
		return nil
	})
}

func newConfig(opts []Option) (*config, error) {
	c := &config{}
	if err := errdefs.ApplyOptions(c, opts, Option.applyToBuild, "nil Option"); err != nil {
		return nil, err
	}
	return c, nil
}
