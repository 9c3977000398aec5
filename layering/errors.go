package layering

import (
	"errors"
	"fmt"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// ErrInvalidPlan is returned by Build, wrapping every problem it found.
var ErrInvalidPlan = errors.New("invalid layer plan")

// Kinds of layer problems, for errors.Is on the Err of a *LayerError.
var (
	ErrInvalidName       = errdefs.ErrInvalidName
	ErrDuplicateLayer    = errors.New("duplicate layer")
	ErrUnknownDependency = errors.New("unknown dependency")
	ErrCycle             = errors.New("dependency cycle")
	ErrInvalidOption     = errdefs.ErrInvalidOption
	ErrMissingPath       = errors.New("missing path")
)

// LayerError is a problem with one layer. File and Line are where the
// layer is declared (a stack file, or a repository's Kustomization), or
// empty for a layer declared in Go.
type LayerError struct {
	Layer string
	File  string
	Line  int
	Err   error
}

func (e *LayerError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: layer %q: %v", e.File, e.Line, e.Layer, e.Err)
	case e.File != "":
		return fmt.Sprintf("%s: layer %q: %v", e.File, e.Layer, e.Err)
	}
	return fmt.Sprintf("layer %q: %v", e.Layer, e.Err)
}

func (e *LayerError) Unwrap() error { return e.Err }

// FileError is a problem at one line of a file: the type packages outputs,
// substitute, fluxbuild and oci return too, so one errors.As serves all.
type FileError = errdefs.FileError

// joinErrs joins errs one per line, without errors.Join's nil handling.
func joinErrs(errs []error) error { return errors.Join(errs...) }
