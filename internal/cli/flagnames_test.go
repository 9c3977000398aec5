package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notFluxpackFlags are the flags library errors may name: those of other
// programs, which the user sets there, with the program.
var notFluxpackFlags = map[string]string{
	"--requeue-dependency": "kustomize-controller's and helm-controller's flag, which fluxpatch.Render sets",
	"--json":               "pulumi stack output's",
	"--show-secrets":       "pulumi stack output's",
}

// errorFuncs are the calls that make library errors, by package and name.
var errorFuncs = map[string]bool{
	"errors.New": true, "fmt.Errorf": true, "errdefs.InvalidOption": true, "errdefs.Kind": true,
}

// flagInText finds a command-line flag in a message.
var flagInText = regexp.MustCompile("(?:^|[\\s(`'\"])(--[a-z][a-z0-9-]*)")

// TestLibraryErrorsNameNoFlags: the errors of fluxpack's library packages
// (all but internal/cli, cmd and the test and tool folders) speak of
// options and fields (WithAllowSecrets), never of fluxpack's flags
// (--allow-secrets): a program that imports the library has no flags. The
// CLI names the flags (optionFlags). Lint findings and coverage notes are
// reports, not errors: they are not checked here.
func TestLibraryErrorsNameNoFlags(t *testing.T) {
	root := filepath.Join("..", "..")
	skip := []string{".cache", ".git", "cmd", "e2e", "hack", "bench", "examples", "docs", filepath.Join("internal", "cli"), filepath.Join("internal", "testutil")}
	fset := token.NewFileSet()
	var files int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if slices.Contains(skip, rel) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !errorFuncs[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			for _, arg := range call.Args {
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					continue
				}
				for _, m := range flagInText.FindAllStringSubmatch(s, -1) {
					if _, ok := notFluxpackFlags[m[1]]; !ok {
						t.Errorf("%s: %s.%s names the flag %s: name the option or field (and map it to the flag in optionFlags)", fset.Position(lit.Pos()), pkg.Name, sel.Sel.Name, m[1])
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 100, "library Go files read")
}

// TestOptionFlags: every flag optionFlags names is one of fluxpack's, and
// it rewrites a library error as the command line says it.
func TestOptionFlags(t *testing.T) {
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags["--"+f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { flags["--"+f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot("test"))
	require.Zero(t, len(optionFlagPairs)%2, "optionFlagPairs: option, flag pairs")
	for i := 0; i < len(optionFlagPairs); i += 2 {
		for _, m := range flagInText.FindAllStringSubmatch(optionFlagPairs[i+1], -1) {
			assert.True(t, flags[m[1]] || m[1] == "--help", "optionFlags maps %q to %s, which no command has", optionFlagPairs[i], m[1])
		}
	}
	assert.Equal(t, "IaC outputs file (keep it outside the pushed folder, or allow it with --allow-secrets)",
		optionFlags.Replace("IaC outputs file (keep it outside the pushed folder, or allow it with WithAllowSecrets)"))
}
