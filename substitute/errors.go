package substitute

import (
	"errors"
	"fmt"

	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// MaxInputSize is the largest input file the package reads whole: 16 MiB.
const MaxInputSize = inputfile.MaxSize

// Errors of this package, for errors.Is. Each is wrapped in a *FileError
// when a file is to blame.
var (
	// ErrMalformed: the file is not valid JSON, YAML or .env.
	ErrMalformed = errors.New("malformed input")
	// ErrTooLarge: an input file read whole (IaC outputs, values map,
	// substituteFrom source, Kustomization file) holds more than
	// MaxInputSize bytes.
	ErrTooLarge = inputfile.ErrTooLarge
	// ErrWrongShape: the file parses but is not what its format prescribes
	// (a Terraform output without "value", CloudFormation without Stacks…).
	ErrWrongShape = errors.New("wrong shape")
	// ErrUnknownFormat: no reader recognises the file, or WithFormat named
	// an unknown format.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrDuplicateName: two outputs map to the same Flux variable name.
	ErrDuplicateName = errors.New("duplicate variable name")
	// ErrSecretPlaceholder: a Pulumi "[secret]" placeholder instead of a
	// value (run `pulumi stack output --json --show-secrets`).
	ErrSecretPlaceholder = errors.New(`"[secret]" placeholder instead of a value`)
	// ErrMissingOutput: a rename or a values map names an output the file
	// does not have.
	ErrMissingOutput = errors.New("no such output")
	// ErrInvalidName: a variable name Flux rejects
	// (^[_[:alpha:]][_[:alpha:][:digit:]]*$), or a name that is empty.
	ErrInvalidName = errors.New("invalid variable name")
	// ErrSensitiveValue: a sensitive output would land in a ConfigMap.
	ErrSensitiveValue = errors.New("sensitive output cannot go into a ConfigMap")
	// ErrInvalidOption: an option was given a value it cannot use.
	ErrInvalidOption = errors.New("invalid option")
	// ErrVarNotSet: strict substitution met a variable that no source
	// provides and that has no default.
	ErrVarNotSet = errors.New("variable not set (strict mode)")
	// ErrSourceNotFound: substituteFrom names a ConfigMap or Secret that
	// is not there and is not optional.
	ErrSourceNotFound = errors.New("substituteFrom source not found")
	// ErrDuplicateID: two objects of a build share group, version, kind,
	// namespace and name (kustomize refuses them, and so does Flux after
	// substitution).
	ErrDuplicateID = errors.New("duplicate object ID")
)

// FileError is a problem with one file, at a line when known.
type FileError struct {
	Path string
	Line int // 1-based; 0 when unknown
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

func fileErr(path string, line int, err error) error {
	return &FileError{Path: path, Line: line, Err: err}
}

// ObjectError is a problem with one Kubernetes object, named the way
// kubectl and Flux events name it: Kind/namespace/name.
type ObjectError struct {
	Object string
	Err    error
}

func (e *ObjectError) Error() string { return fmt.Sprintf("%s: %v", e.Object, e.Err) }

func (e *ObjectError) Unwrap() error { return e.Err }
