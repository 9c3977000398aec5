package substitute

import (
	"errors"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// MaxInputSize is the largest substituteFrom source file ReadSources
// reads: 16 MiB.
const MaxInputSize = inputfile.MaxSize

// Errors of this package, for errors.Is. Each is wrapped in a *FileError
// when a file is to blame, or an *ObjectError when an object is.
var (
	// ErrMalformed: a substituteFrom source file is not valid YAML.
	ErrMalformed = errdefs.ErrMalformed
	// ErrTooLarge: a substituteFrom source file holds more than
	// MaxInputSize bytes.
	ErrTooLarge = errdefs.ErrTooLarge
	// ErrWrongShape: a source file holds something else than ConfigMaps and
	// Secrets.
	ErrWrongShape = errdefs.ErrWrongShape
	// ErrInvalidName: a variable name Flux rejects
	// (^[_[:alpha:]][_[:alpha:][:digit:]]*$).
	ErrInvalidName = errdefs.ErrInvalidName
	// ErrInvalidOption: an option was given a value it cannot use.
	ErrInvalidOption = errdefs.ErrInvalidOption
	// ErrVarNotSet: strict substitution met a variable that no source
	// provides and that has no default.
	ErrVarNotSet = errors.New("variable not set (strict mode)")
	// ErrSourceNotFound: substituteFrom names a ConfigMap or Secret that
	// is not there and is not optional.
	ErrSourceNotFound = errors.New("substituteFrom source not found")
	// ErrDuplicateID: two objects share group, version, kind, namespace and
	// name after substitution (Flux refuses them).
	ErrDuplicateID = errdefs.ErrDuplicateID
)

// FileError is a problem with one file, at a line when known: the type
// packages outputs, fluxbuild, layering and oci return too.
type FileError = errdefs.FileError

// ObjectError is a problem with one Kubernetes object, named the way
// kubectl and Flux events name it: Kind/namespace/name.
type ObjectError = errdefs.ObjectError

func fileErr(path string, line int, err error) error {
	return &FileError{Path: path, Line: line, Err: err}
}
