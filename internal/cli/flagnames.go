package cli

import "strings"

// optionFlags names, in the errors Main prints, the library options whose
// messages advise them by the flags that set them. The library speaks of
// its options (WithAllowSecrets); the command line of its flags.
var optionFlags = strings.NewReplacer(
	"WithIgnorePaths", "--ignore-paths",
	"WithAllowSecrets", "--allow-secrets",
	"WithCreds", "--creds",
	"WithRename", "--rename",
)

// flagWorded is a library error reworded for the command line: its message
// names the flags that set the options or fields the library's message
// names. errors.Is and errors.As still see the library's error.
type flagWorded struct {
	err error
	msg string
}

func (e flagWorded) Error() string { return e.msg }
func (e flagWorded) Unwrap() error { return e.err }
