package layering

import (
	"errors"
	"fmt"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// ErrInvalidPlan is returned by Build, wrapping every problem it found.
var ErrInvalidPlan = errors.New("invalid layer plan")

// ErrInvalidStack is returned when a stack file cannot be read as a Stack;
// it wraps one *FileError per problem.
var ErrInvalidStack = errors.New("invalid stack file")

// MaxStackSize is the largest stack file LoadStack reads: 16 MiB. A larger
// one is an error wrapping ErrStackTooLarge.
const MaxStackSize = inputfile.MaxSize

// ErrStackTooLarge is wrapped by LoadStack's error about a stack file over
// MaxStackSize.
var ErrStackTooLarge = inputfile.ErrTooLarge

// Kinds of layer problems, for errors.Is on the Err of a *LayerError.
var (
	ErrInvalidName       = errors.New("invalid name")
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

// kindError is a message that errors.Is matches against a sentinel without
// repeating the sentinel's text.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// joinErrs joins errs one per line, without errors.Join's nil handling.
func joinErrs(errs []error) error { return errors.Join(errs...) }
