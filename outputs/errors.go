package outputs

import (
	"errors"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// MaxInputSize is the largest input file the package reads whole: 16 MiB.
const MaxInputSize = inputfile.MaxSize

// FileError is a problem with one file, at a line when known: the type
// packages substitute, fluxbuild, layering and oci return too.
type FileError = errdefs.FileError

// Errors of this package, for errors.Is. Each is wrapped in a *FileError
// when a file is to blame.
var (
	// ErrMalformed: the file is not valid JSON, YAML or .env.
	ErrMalformed = errdefs.ErrMalformed
	// ErrTooLarge: an input file (IaC outputs, values map) holds more
	// than MaxInputSize bytes.
	ErrTooLarge = inputfile.ErrTooLarge
	// ErrWrongShape: the file parses but is not what its format prescribes
	// (a Terraform output without "value", CloudFormation without Stacks…).
	ErrWrongShape = errdefs.ErrWrongShape
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
	// ErrInvalidName: a name that is empty, or a rename to a variable
	// name Flux rejects (package substitute's sentinel).
	ErrInvalidName = substitute.ErrInvalidName
	// ErrSensitiveValue: a sensitive output would land in a ConfigMap.
	ErrSensitiveValue = errors.New("sensitive output cannot go into a ConfigMap")
	// ErrInvalidOption: an option was given a value it cannot use.
	ErrInvalidOption = errdefs.ErrInvalidOption
)

func fileErr(path string, line int, err error) error {
	return &FileError{Path: path, Line: line, Err: err}
}
