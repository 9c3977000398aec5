package fluxrepo_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// randomRepository lays out a Flux repository of n Kustomizations with
// what real trees get wrong: dependsOn cycles and self-loops, unknown
// dependencies, missing paths, wide fan-out, parents applying children,
// wait, suspend, sources the tree does not have, CRDs and custom
// resources scattered over the layers.
func randomRepository(t *testing.T, r *rand.Rand) string {
	t.Helper()
	n := 1 + r.IntN(40)
	files := map[string]string{}
	name := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range n {
		var extra strings.Builder
		var deps []string
		fanOut := 3
		if r.IntN(8) == 0 {
			fanOut = n
		}
		for range r.IntN(fanOut + 1) {
			switch j := r.IntN(n + 2); {
			case j == n:
				deps = append(deps, "nowhere")
			case j == n+1:
				deps = append(deps, name(i))
			default:
				deps = append(deps, name(j))
			}
		}
		if len(deps) > 0 {
			extra.WriteString("  dependsOn:\n")
			for _, d := range deps {
				extra.WriteString("    - name: " + d + "\n")
			}
		}
		if r.IntN(3) == 0 {
			extra.WriteString("  wait: true\n")
		}
		if r.IntN(10) == 0 {
			extra.WriteString("  suspend: true\n")
		}
		path := fmt.Sprintf("./apps/%d", i)
		doc := ks(name(i), path, extra.String())
		if r.IntN(12) == 0 {
			doc = strings.Replace(doc, "name: flux-system\n", "name: elsewhere\n", 1) // a source the tree lacks
		}
		// Most are applied by the entry point; some by another layer.
		parent := "clusters/c"
		if i > 0 && r.IntN(4) == 0 {
			parent = fmt.Sprintf("apps/%d", r.IntN(i))
		}
		files[fmt.Sprintf("%s/ks-%d.yaml", parent, i)] = doc
		switch r.IntN(5) {
		case 0: // no folder at all: the path does not build
		case 1:
			files[fmt.Sprintf("apps/%d/crd.yaml", i)] = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n"
		case 2:
			files[fmt.Sprintf("apps/%d/widget.yaml", i)] = fmt.Sprintf("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w%d, namespace: team}\n", i)
		case 3:
			files[fmt.Sprintf("apps/%d/ns.yaml", i)] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"
		default:
			files[fmt.Sprintf("apps/%d/cm.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: team}\ndata: {k: ${v}}\n", i)
		}
	}
	root := t.TempDir()
	testutil.WriteFiles(t, root, files)
	return root
}

// Lint, graph, import and preview end on any repository, with a report or
// an error, in bounded time: never a loop or a crash (a dependsOn cycle
// once made graph run out of memory).
func TestAnyRepositoryEnds(t *testing.T) {
	seeds := uint64(60)
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 31))
		root := randomRepository(t, r)
		entry := filepath.Join(root, "clusters", "c")
		opts := []fluxrepo.Option{fluxrepo.WithRoot(root)}
		done := make(chan error, 1)
		go func() {
			done <- func() error {
				rep, err := fluxrepo.Lint(t.Context(), entry, opts...)
				if err != nil {
					return fmt.Errorf("lint: %w", err)
				}
				if rep.Checked > rep.Layers || rep.Checked < 0 {
					return fmt.Errorf("lint checked %d of %d layers", rep.Checked, rep.Layers)
				}
				for _, f := range layering.GraphFormats() {
					if _, err := fluxrepo.Graph(t.Context(), entry, f, opts...); err != nil {
						return fmt.Errorf("graph %s: %w", f, err)
					}
				}
				_, _ = fluxrepo.Import(t.Context(), entry, opts...) // an error is an answer too
				_, _ = fluxrepo.Preview(t.Context(), entry, "k0", opts)
				return nil
			}()
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("seed %d: %v", seed, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("seed %d: lint, graph, import and preview of a random repository did not end in 30s", seed)
		}
	}
}
