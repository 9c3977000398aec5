package stackfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// FuzzParse feeds arbitrary bytes to the stack-file decoder. It must
// never panic; a refusal is ErrInvalid naming the file; a stack it
// accepts either builds or is refused as ErrInvalidPlan, and a plan that
// builds yields its files and every graph format.
func FuzzParse(f *testing.F) {
	stacks, _ := filepath.Glob(filepath.Join("testdata", "stacks", "*.yaml"))
	for _, p := range stacks {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: s}\nspec:\n  source: {url: oci://r/x, tag: v1}\n  layers:\n    - {name: a, path: ./a, helmRelease: {chartRef: {kind: OCIRepository, name: c}}}\n    - {name: b, dependsOn: [{name: a, readyExpr: 'true'}], path: ./b, wait: true}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := stackfile.Parse("stack.yaml", data)
		if err != nil {
			if !errors.Is(err, stackfile.ErrInvalid) || !strings.Contains(err.Error(), "stack.yaml") {
				t.Fatalf("%v: want ErrInvalid naming stack.yaml", err)
			}
			return
		}
		plan, err := b.Build()
		if err != nil {
			if !errors.Is(err, layering.ErrInvalidPlan) {
				t.Fatalf("%v: want ErrInvalidPlan", err)
			}
			return
		}
		if _, err := plan.Files(); err != nil {
			t.Fatalf("files of a plan that built: %v", err)
		}
		for _, format := range layering.GraphFormats() {
			if _, err := plan.Graph(format); err != nil {
				t.Fatalf("%s graph of a plan that built: %v", format, err)
			}
		}
	})
}
