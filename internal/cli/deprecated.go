package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// keepOldOutput keeps, for one release, the -o/--output that render, pull
// and outputs (a directory) and import (a file) had before -o came to mean
// the output format in every command, as in kubectl and flux. The old flag
// is hidden; given, its value goes to the flag named to, and a notice to
// stderr. Giving both is an error.
//
// cobra's MarkDeprecated cannot do it: the old flag must keep its shorthand,
// and cobra prints the notice on the command's output, which is stdout here.
// The value is moved before cobra checks required flags, so a required new
// flag is satisfied by the old spelling.
func keepOldOutput(cmd *cobra.Command, to string) {
	var old string
	fs := cmd.Flags()
	fs.StringVarP(&old, "output", "o", "", "deprecated: use --"+to)
	_ = fs.MarkHidden("output")
	next := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		fs := cmd.Flags()
		if fs.Changed("output") {
			spelling := "--" + to
			if sh := fs.Lookup(to).Shorthand; sh != "" {
				spelling = "-" + sh + "/" + spelling
			}
			if fs.Changed(to) {
				return fmt.Errorf("give %s only: -o/--output is its deprecated spelling", spelling)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Flag -o/--output has been deprecated, use %s: -o will mean the output format, as in the other commands\n", spelling)
			if err := fs.Set(to, old); err != nil {
				return err
			}
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}
