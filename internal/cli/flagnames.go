package cli

import "strings"

// optionFlags names, in the errors Main prints, the library options whose
// messages advise them by the flags that set them. The library speaks of
// its options (WithAllowSecrets) and formats; the command line of its flags
// and help. TestLibraryErrorsNameNoFlags holds the library to that, and
// TestOptionFlags this table to the flags the commands have.
var optionFlags = strings.NewReplacer(optionFlagPairs...)

// optionFlagPairs are optionFlags' replacements: option (or format) as the
// library names it, then the command line's words for it.
var optionFlagPairs = []string{
	"WithIgnorePaths", "--ignore-paths",
	"WithAllowSecrets", "--allow-secrets",
	"WithCreds", "--creds",
	"WithRename", "--rename",
	"WithRevision", "--revision",
	"the ValuesMap format", "--values-map in `fluxpack outputs --help`",
	"PromoteOptions.Render", "--render",
	"WithOtherCluster", "--other-cluster",
	"give the base revision explicitly (Resolve)", "give one with --base",
	"WithAllowRemote", "--allow-remote",
	"WithAddr", "--addr",
	"WithDir", "--dir",
}

// flagWorded is a library error reworded for the command line: its message
// names the flags that set the options or fields the library's message
// names. errors.Is and errors.As still see the library's error.
type flagWorded struct {
	err error
	msg string
}

func (e flagWorded) Error() string { return e.msg }
func (e flagWorded) Unwrap() error { return e.err }
