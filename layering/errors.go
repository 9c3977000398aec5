package layering

import (
	"errors"
	"fmt"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/substitute"
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
	ErrInvalidOption     = errors.New("invalid option")
	ErrMissingPath       = errors.New("missing path")
)

// LayerError is a problem with one layer. At is where the layer is declared
// in a stack file (file:line), or empty for a layer declared in Go.
type LayerError struct {
	Layer string
	At    string
	Err   error
}

func (e *LayerError) Error() string {
	if e.At != "" {
		return fmt.Sprintf("%s: layer %q: %v", e.At, e.Layer, e.Err)
	}
	return fmt.Sprintf("layer %q: %v", e.Layer, e.Err)
}

func (e *LayerError) Unwrap() error { return e.Err }

// FileError is a problem at one line of a file: the same type as package
// substitute's, so one errors.As serves both.
type FileError = substitute.FileError

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
