package lint

import "github.com/fluxpack/fluxpack/internal/errdefs"

// ErrInvalidOption is wrapped by the error of an Option given a value it
// cannot use: the value of layering.ErrInvalidOption and of every other
// package's.
var ErrInvalidOption = errdefs.ErrInvalidOption
