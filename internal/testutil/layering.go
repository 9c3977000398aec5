package testutil

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Render returns a Plan's files as one text, each after a "--- path" line.
func Render(t testing.TB, p *layering.Plan) string {
	t.Helper()
	files, err := p.Files()
	if err != nil {
		t.Fatalf("rendering %s: %v", p.Name, err)
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString("--- " + f.Path + "\n")
		b.Write(f.Data)
	}
	return b.String()
}

// CheckExample checks a worked example: the stack built in Go renders the
// golden testdata/render.golden, the stack file renders the same bytes, and
// lint of the stack file finds nothing that fails it; its hints (layers
// that could merge) are the golden testdata/lint-hints.golden.
func CheckExample(t *testing.T, b *layering.Builder, stackFile string) *layering.Plan {
	t.Helper()
	plan, err := b.Build()
	if err != nil {
		t.Fatalf("building the example: %v", err)
	}
	got := Render(t, plan)
	Golden(t, "render", []byte(got))

	fb, err := stackfile.Load(stackFile)
	if err != nil {
		t.Fatalf("loading %s: %v", stackFile, err)
	}
	fplan, err := fb.Build()
	if err != nil {
		t.Fatalf("building %s: %v", stackFile, err)
	}
	if diff := cmp.Diff(got, Render(t, fplan)); diff != "" {
		t.Errorf("%s renders differently from the Go program (-go +file):\n%s", stackFile, diff)
	}
	rep, err := lint.File(t.Context(), stackFile)
	if err != nil {
		t.Fatalf("linting %s: %v", stackFile, err)
	}
	var hints strings.Builder
	for _, f := range rep.Findings {
		if f.Fails() {
			t.Errorf("lint %s: %s", stackFile, f)
			continue
		}
		hints.WriteString(f.String() + "\n")
	}
	Golden(t, "lint-hints", []byte(hints.String()))
	graph, err := fplan.Graph(layering.GraphTree)
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, "graph-tree", graph)
	return plan
}

// LintFindings lints a stack file and returns its findings, one per line
// with their places under them, for a golden file.
func LintFindings(t *testing.T, stackFile string) []byte {
	t.Helper()
	rep, err := lint.File(t.Context(), stackFile)
	if err != nil {
		t.Fatalf("linting %s: %v", stackFile, err)
	}
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.String() + "\n")
		for _, p := range f.Places {
			b.WriteString("  " + p.String() + "\n")
		}
	}
	return []byte(b.String())
}
