package lint_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
)

// BenchmarkBuildLint builds and lints generated stacks of 100 and 1,000
// layers, 50 objects a layer (50,000 objects at 1,000 layers):
//
//	go test ./lint -run '^$' -bench BuildLint -benchtime 5x
func BenchmarkBuildLint(b *testing.B) {
	for _, layers := range []int{100, 1000} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			dir := b.TempDir()
			stack, err := testutil.GenerateStack(dir, layers, layers*50, 1)
			require.NoError(b, err)
			var objects int
			run := func() {
				plan, err := stack.Build()
				if err != nil {
					b.Fatal(err)
				}
				rep, err := lint.Stack(b.Context(), stack, dir)
				if err != nil {
					b.Fatal(err)
				}
				if rep.Failing() > 0 || len(plan.Layers) != layers {
					b.Fatalf("want a clean stack of %d layers, got %d layers and findings %v", layers, len(plan.Layers), rep.Findings)
				}
				objects = rep.Objects
			}
			// One run first, untimed, as for the floor: at 1,000 layers a
			// second of -benchtime holds one or two runs, and the process's
			// first one (its heap grown from nothing) would be half of them.
			run()
			report := testutil.CPUMeter(b)
			for b.Loop() {
				run()
			}
			report()
			b.ReportMetric(float64(objects), "objects")
		})
	}
}

// BenchmarkDecodeFloor decodes every manifest file of the 1,000-layer stack
// with go.yaml.in/yaml/v3 (the parser kustomize uses) on every core, and
// nothing else: what a linter that reads the YAML with its lines through
// the parser does at least, the floor BenchmarkBuildLint is held to.
// fluxpack decodes the documents of the plain shape by hand
// (yamlutil.DecodePlain: every document of this stack, though kustomize
// parses the kustomized layers' again, and about 70 % of those of public
// Flux repositories), so it can go below.
func BenchmarkDecodeFloor(b *testing.B) {
	b.Run("layers=1000", func(b *testing.B) {
		dir := b.TempDir()
		_, err := testutil.GenerateStack(dir, 1000, 50000, 1)
		require.NoError(b, err)
		var files []string
		require.NoError(b, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".yaml" && d.Name() != "kustomization.yaml" {
				files = append(files, p)
			}
			return err
		}))
		decode := func() {
			work := make(chan string)
			var mu sync.Mutex
			var failed error
			fail := func(err error) {
				mu.Lock()
				failed = cmp.Or(failed, err)
				mu.Unlock()
			}
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for f := range work {
						data, err := inputfile.ReadManifest(f)
						if err != nil {
							fail(err)
							continue
						}
						dec := yaml.NewDecoder(bytes.NewReader(data))
						for {
							var n yaml.Node
							if err := dec.Decode(&n); err != nil {
								if !errors.Is(err, io.EOF) {
									fail(err)
								}
								break
							}
						}
					}
				})
			}
			for _, f := range files {
				work <- f
			}
			close(work)
			wg.Wait()
			if failed != nil {
				b.Fatal(failed)
			}
		}
		decode() // untimed, as BenchmarkBuildLint's first run
		report := testutil.CPUMeter(b)
		for b.Loop() {
			decode()
		}
		report()
	})
}

// The generated stack is what the benchmark claims: clean, of the asked size.
func TestGenerateStack(t *testing.T) {
	dir := t.TempDir()
	stack, err := testutil.GenerateStack(dir, 50, 2000, 1)
	require.NoError(t, err)
	rep, err := lint.Stack(t.Context(), stack, dir)
	require.NoError(t, err)
	require.Zero(t, rep.Failing(), "%v", rep.Findings)
	require.Equal(t, 50, rep.Layers)
	require.Equal(t, 2000+40+20, rep.Objects, "the objects plus the namespaces and CRDs")
}
