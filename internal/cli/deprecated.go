package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// refuseOldOutput keeps the -o/--output that render, pull and outputs (a
// directory) and import (a file) had before -o came to mean the output
// format in every command, as in kubectl and flux, only to refuse it with
// an error naming the flag to use: after one release of deprecation the
// two meanings are not let to collide (`outputs … -o json` wrote a
// directory named json). The flag is hidden from help.
func refuseOldOutput(cmd *cobra.Command, to string) {
	var old string
	fs := cmd.Flags()
	fs.StringVarP(&old, "output", "o", "", "removed: use --"+to)
	_ = fs.MarkHidden("output")
	next := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		fs := cmd.Flags()
		if fs.Changed("output") {
			spelling := "--" + to
			if sh := fs.Lookup(to).Shorthand; sh != "" {
				spelling = "-" + sh + "/" + spelling
			}
			what := "directory"
			if strings.HasSuffix(to, "-file") {
				what = "file"
			}
			return fmt.Errorf("-o/--output %q: -o is the output format in fluxpack, no longer the output %s, and %s has no format to choose: use %s %s",
				old, what, cmd.Name(), spelling, old)
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}

// formatError says that v is not one of the formats -o takes (want), and,
// when v looks like a directory or a file, that -o no longer names one.
func formatError(v, want string) error {
	err := fmt.Errorf("invalid -o/--output %q: want %s", v, want)
	if looksLikePath(v) {
		return fmt.Errorf("%w; -o is the output format, no longer a directory or file to write to (-d/--output-dir, --output-file)", err)
	}
	return err
}

// looksLikePath reports whether v, given where a format is expected, is
// rather a path: it has a separator or a dot, or names an existing file
// or directory.
func looksLikePath(v string) bool {
	if strings.ContainsAny(v, `/\.`) {
		return true
	}
	_, err := os.Stat(v)
	return err == nil
}
