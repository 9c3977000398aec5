// Package errdefs defines, once, the error types and sentinels that several
// of fluxpack's public packages return. Each package re-exports them under
// its own name (type aliases and variables holding the same value), so
// errors.As and errors.Is work with any of those names, across packages.
package errdefs

import (
	"errors"
	"fmt"
	"slices"
)

// FileError is a problem with one file, at a line when known, like
// fs.PathError.
type FileError struct {
	Path string // as the caller named the file
	Line int    // 1-based; 0 when unknown or not applicable
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", Place(e.Path, e.Line), e.Err) }

// Place names where something is as compilers and linters do: "file:line",
// "file" when the line is unknown (0), "" without a file.
func Place(file string, line int) string {
	if file != "" && line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

func (e *FileError) Unwrap() error { return e.Err }

// ObjectError is a problem with one Kubernetes object, named the way
// kubectl and Flux's events name it: Kind/namespace/name or Kind/name.
type ObjectError struct {
	Object string
	Err    error
}

func (e *ObjectError) Error() string { return fmt.Sprintf("%s: %v", e.Object, e.Err) }

func (e *ObjectError) Unwrap() error { return e.Err }

// Sentinels that more than one package returns.
var (
	// ErrInvalidOption is wrapped by the error of an option given a value
	// it cannot use.
	ErrInvalidOption = errors.New("invalid option")
	// ErrMalformed: a file is not valid JSON, YAML or .env.
	ErrMalformed = errors.New("malformed input")
	// ErrWrongShape: a file parses but is not what its format prescribes.
	ErrWrongShape = errors.New("wrong shape")
	// ErrDuplicateID: two objects of a build share group, version, kind,
	// namespace and name.
	ErrDuplicateID = errors.New("duplicate object ID")
	// ErrInvalidName: a name Flux or Kubernetes would reject: a layer's,
	// a namespace, a variable's (^[_[:alpha:]][_[:alpha:][:digit:]]*$).
	ErrInvalidName = errors.New("invalid name")
	// ErrTooLarge: an input file holds more than inputfile.MaxSize bytes.
	ErrTooLarge = errors.New("file too large")
)

// InvalidOption returns an error wrapping ErrInvalidOption.
func InvalidOption(format string, args ...any) error {
	return &kindError{kind: ErrInvalidOption, msg: fmt.Sprintf(format, args...)}
}

// NonEmpty is the body of an option that stores one string which may not
// be empty (a file, a folder): it refuses "" with ErrInvalidOption
// ("OPTION: empty WHAT"), else stores v where field points.
func NonEmpty[C any](option, what, v string, field func(*C) *string) func(*C) error {
	return func(c *C) error {
		if v == "" {
			return InvalidOption("%s: empty %s", option, what)
		}
		*field(c) = v
		return nil
	}
}

// NonNil is the body of an option that stores one value which may not be
// nil (a logger, a client; a pointer or an interface): it refuses nil
// with ErrInvalidOption ("OPTION: nil WHAT"), else stores v where field
// points.
func NonNil[C any, T comparable](option, what string, v T, field func(*C) *T) func(*C) error {
	return func(c *C) error {
		var none T
		if v == none {
			return InvalidOption("%s: nil %s", option, what)
		}
		*field(c) = v
		return nil
	}
}

// NoneEmpty is the body of an option that adds a list of strings none of
// which may be empty (files, folders): it refuses the list if one is ""
// with ErrInvalidOption ("OPTION: empty WHAT"), else appends vs to the
// list field points at.
func NoneEmpty[C any](option, what string, vs []string, field func(*C) *[]string) func(*C) error {
	return func(c *C) error {
		if slices.Contains(vs, "") {
			return InvalidOption("%s: empty %s", option, what)
		}
		list := field(c)
		*list = append(*list, vs...)
		return nil
	}
}

// ApplyOptions applies each of a package's options to c, in order, with
// apply (the options' unexported method, as a method expression), and
// stops at the first error. A nil option fails with ErrInvalidOption and
// nilMsg ("nil Option"). O must be an interface type: a nil func is not
// seen as nil.
func ApplyOptions[O, C any](c C, opts []O, apply func(O, C) error, nilMsg string) error {
	for _, o := range opts {
		if any(o) == nil {
			return &kindError{kind: ErrInvalidOption, msg: nilMsg}
		}
		if err := apply(o, c); err != nil {
			return err
		}
	}
	return nil
}

// Kind returns an error with the message format gives that errors.Is
// matches against kind, without repeating kind's text.
func Kind(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }
