package api_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// packages are fluxpack's public packages, in the order data flows.
var packages = []string{"outputs", "substitute", "fluxbuild", "layering", "stackfile", "render", "charts", "sources", "fluxrepo", "bootstrap", "lint", "argocd", "oci", "oci/cosign", "oci/notation", "fleet", "fluxpatch", "status", "review"}

// TestAPI writes each public package's exported declarations, without
// their comments, and the number of exported names.
func TestAPI(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, name := range packages {
		t.Run(name, func(t *testing.T) {
			api, n := exported(t, filepath.Join(root, name))
			require.Positive(t, n)
			testutil.Golden(t, strings.ReplaceAll(name, "/", "-"), []byte(fmt.Sprintf("package %s: %d exported names\n\n%s", name, n, api)))
		})
	}
}

// exported prints the package in dir as go doc -all would, comments left
// out, and counts its exported names (constants, variables, functions,
// types, and their methods and exported fields).
func exported(t *testing.T, dir string) (string, int) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	var p *ast.Package
	for _, v := range pkgs {
		p = v
	}
	d := doc.New(p, "", 0)
	var b bytes.Buffer
	n := 0
	decl := func(node any) {
		cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
		require.NoError(t, cfg.Fprint(&b, fset, node))
		b.WriteString("\n\n")
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, s := range v.Decl.Specs {
				for _, name := range s.(*ast.ValueSpec).Names {
					if name.IsExported() {
						n++
					}
				}
			}
			decl(v.Decl)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			n++
			f.Decl.Body, f.Decl.Doc = nil, nil
			decl(f.Decl)
		}
	}
	values(d.Consts)
	values(d.Vars)
	funcs(d.Funcs)
	for _, ty := range d.Types {
		n++
		for _, s := range ty.Decl.Specs {
			ts := s.(*ast.TypeSpec)
			ts.Doc, ts.Comment = nil, nil
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					f.Doc, f.Comment = nil, nil
					for _, nm := range f.Names {
						if nm.IsExported() {
							n++
						}
					}
				}
			}
			if it, ok := ts.Type.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					m.Doc, m.Comment = nil, nil
				}
			}
		}
		ty.Decl.Doc = nil
		decl(ty.Decl)
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
		funcs(ty.Methods)
	}
	return b.String(), n
}
