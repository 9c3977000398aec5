package fluxrepo_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
)

// BenchmarkLintRepository lints generated Flux repositories of 20 and 200
// Kustomizations (100 objects each: 20,000 at 200) from their entry point;
// BenchmarkLintStackSameObjects lints the same 200 layers as a stack file
// would (layering.Lint), the peer of the repository path:
//
//	go test ./fluxrepo -run '^$' -bench 'LintRepository|LintStackSameObjects' -benchtime 5x
func BenchmarkLintRepository(b *testing.B) {
	for _, layers := range []int{20, 200} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			dir := b.TempDir()
			_, entry, err := testutil.GenerateRepository(dir, layers, layers*100, 1)
			require.NoError(b, err)
			var objects int
			report := testutil.CPUMeter(b)
			for b.Loop() {
				rep, err := lint.Tree(b.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(dir)})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Failing() > 0 || rep.Layers != layers+1 {
					b.Fatalf("want a repository of %d layers and its root that lints clean, got %d layers and findings %v", layers, rep.Layers, rep.Findings)
				}
				objects = rep.Objects
			}
			report()
			b.ReportMetric(float64(objects), "objects")
		})
	}
}

func BenchmarkLintStackSameObjects(b *testing.B) {
	b.Run("layers=200", func(b *testing.B) {
		dir := b.TempDir()
		stack, _, err := testutil.GenerateRepository(dir, 200, 20000, 1)
		require.NoError(b, err)
		var objects int
		report := testutil.CPUMeter(b)
		for b.Loop() {
			rep, err := lint.Stack(b.Context(), stack, dir)
			if err != nil {
				b.Fatal(err)
			}
			if rep.Failing() > 0 {
				b.Fatalf("findings %v", rep.Findings)
			}
			objects = rep.Objects
		}
		report()
		b.ReportMetric(float64(objects), "objects")
	})
}
