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
}

type funcOption func(*config) error

func (f funcOption) applyToBuild(c *config) error { return f(c) }

// WithLogger logs, as warnings, what Build leaves out of a source because
// Flux leaves it out too: a symbolic link whose target does not exist, and
// every symbolic link of a packed source (source-controller packs regular
// files only).
func WithLogger(l *slog.Logger) Option {
	return funcOption(func(c *config) error {
		if l == nil {
			return errdefs.InvalidOption("logger: nil")
		}
		c.log = l
		return nil
	})
}

func newConfig(opts []Option) (*config, error) {
	c := &config{}
	for _, o := range opts {
		if o == nil {
			return nil, errdefs.InvalidOption("nil Option")
		}
		if err := o.applyToBuild(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
