package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

func newDiffCmd(f *rootFlags) *cobra.Command {
	var (
		reg          registryFlags
		out          outputFlag
		ignorePaths  []string
		allowSecrets bool
	)
	cmd := &cobra.Command{
		Use:   "diff DIR oci://HOST/REPOSITORY:TAG",
		Short: "Compare a directory with what a tag holds",
		Long: `Diff compares the artifact DIR would make with what the tag holds and lists
the files that differ: + added, - removed, ~ modified (content or mode).

Exit code: 0 identical, 1 differs or the tag does not exist (the output says
which), 2 error (bad input, unreachable registry, refused credentials).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			opts := append(reg.diffOptions(f.log), oci.WithIgnorePaths(ignorePaths...))
			if allowSecrets {
				opts = append(opts, oci.WithAllowSecrets())
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			res, err := oci.Diff(ctx, args[0], args[1], opts...)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out == "json" {
				err = writeJSON(w, res)
			} else {
				err = printDiff(w, args[1], res)
			}
			if err != nil {
				return err
			}
			switch res.Status {
			case oci.Differs:
				return &FindingError{Msg: fmt.Sprintf("%s differs from %s", args[0], args[1])}
			case oci.Missing:
				return &FindingError{Msg: fmt.Sprintf("%s does not exist", args[1])}
			}
			return nil
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	cmd.Flags().StringSliceVar(&ignorePaths, "ignore-paths", nil, "more paths to ignore, .gitignore syntax")
	cmd.Flags().BoolVar(&allowSecrets, "allow-secrets", false, "allow plaintext Kubernetes Secrets and IaC outputs files in the directory")
	return cmd
}

func printDiff(w io.Writer, url string, res *oci.DiffResult) error {
	switch res.Status {
	case oci.Missing:
		_, err := fmt.Fprintf(w, "missing: %s does not exist\n", url)
		return err
	case oci.Identical:
		_, err := fmt.Fprintf(w, "identical: %s (%s)\n", url, res.Digest)
		return err
	}
	if _, err := fmt.Fprintf(w, "differs: %s (%s)\n", url, res.Digest); err != nil {
		return err
	}
	for _, group := range []struct {
		mark  string
		paths []string
	}{{"+", res.Added}, {"-", res.Removed}, {"~", res.Modified}} {
		for _, p := range group.paths {
			if _, err := fmt.Fprintf(w, "%s %s\n", group.mark, p); err != nil {
				return err
			}
		}
	}
	return nil
}
