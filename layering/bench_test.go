package layering_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// BenchmarkBuildLint builds and lints generated stacks of 100 and 1,000
// layers, 50 objects a layer (50,000 objects at 1,000 layers):
//
//	go test ./layering -run '^$' -bench BuildLint -benchtime 5x
func BenchmarkBuildLint(b *testing.B) {
	for _, layers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			dir := b.TempDir()
			stack, err := testutil.GenerateStack(dir, layers, layers*50, 1)
			require.NoError(b, err)
			var objects int
			for b.Loop() {
				plan, err := stack.Build()
				if err != nil {
					b.Fatal(err)
				}
				rep, err := layering.Lint(b.Context(), stack, dir)
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.Findings) > 0 || len(plan.Layers) != layers {
					b.Fatalf("want a clean stack of %d layers, got %d layers and %d findings: %v", layers, len(plan.Layers), len(rep.Findings), rep.Findings[0])
				}
				objects = rep.Objects
			}
			b.ReportMetric(float64(objects), "objects")
		})
	}
}

// The generated stack is what the benchmark claims: clean, of the asked size.
func TestGenerateStack(t *testing.T) {
	dir := t.TempDir()
	stack, err := testutil.GenerateStack(dir, 50, 2000, 1)
	require.NoError(t, err)
	rep, err := layering.Lint(t.Context(), stack, dir)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.Equal(t, 50, rep.Layers)
	require.Equal(t, 2000+40+20, rep.Objects, "the objects plus the namespaces and CRDs")
}
