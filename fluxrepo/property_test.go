package fluxrepo_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
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
		if err := ends(t, randomRepository(t, r)); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

// FuzzRepository: a random repository (from seed) with one file of any
// content beside its entry point's Kustomizations, as a hand-edited tree
// holds: lint, graph, import and preview end with an answer or an error.
//
//	go test ./fluxrepo -run '^$' -fuzz FuzzRepository -fuzztime 2m -test.fuzzminimizetime=0
//
// (With minimization on and two workers, the minimizer's worker dies with
// EOF within a minute on a loaded 2-core machine, and the input it names
// passes when run: not understood yet; 60 s without it found nothing.)
func FuzzRepository(f *testing.F) {
	f.Add(uint64(1), []byte(ks("x", "./apps/0", "  dependsOn:\n    - name: x\n")))
	f.Add(uint64(2), []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k0}\nspec: {path: ../../.., sourceRef: {kind: GitRepository, name: flux-system}}\n"))
	f.Add(uint64(3), []byte("kind: Kustomization\napiVersion: kustomize.toolkit.fluxcd.io/v1\nmetadata: {name: ${a}, namespace: ${b}}\nspec: {path: ./${c}}\n---\n- [\n"))
	f.Add(uint64(4), []byte("apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec: {sync: {kind: OCIRepository, path: clusters/c}, cluster: {multitenant: true}}\n"))
	f.Fuzz(func(t *testing.T, seed uint64, extra []byte) {
		r := rand.New(rand.NewPCG(seed, 31))
		root := randomRepository(t, r)
		testutil.WriteFiles(t, root, map[string]string{"clusters/c/fuzz.yaml": string(extra)})
		if err := ends(t, root); err != nil {
			t.Error(err)
		}
	})
}

// ends runs lint, graph (every format), import and preview on the
// repository at root (entry clusters/c) and says what went wrong: an
// error of lint or graph on a tree they must report on, a lint report
// that does not add up, or no end before the test's deadline (a loop).
func ends(t *testing.T, root string) error {
	t.Helper()
	entry := filepath.Join(root, "clusters", "c")
	opts := []fluxrepo.Option{fluxrepo.WithRoot(root)}
	done := make(chan error, 1)
	go func() {
		// A panic here would kill the process (the fuzzing worker, with
		// no word of why): it is the test's failure instead.
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		done <- func() error {
			rep, err := lint.Tree(t.Context(), entry, opts)
			if err != nil {
				if strings.Contains(err.Error(), "reading the entry point") {
					return nil // a file the entry point cannot build: an error is the answer
				}
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
	// A loop is what go test's own timeout is for; this says which
	// repository looped, a little before that timeout kills the binary.
	// No shorter limit: a cold -race run on a loaded machine is slow.
	deadline, ok := t.Deadline()
	if !ok {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-time.After(time.Until(deadline) - 20*time.Second):
		t.Fatal("lint, graph, import and preview of a random repository did not end before the test's deadline: a loop?")
		return nil
	}
}

// A dependsOn entry without a name (found by FuzzRepository: graph's tree
// took it for the HelmRelease marker and crashed) is a graph finding, and
// every graph format draws it.
func TestDependsOnWithoutName(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c/apps.yaml": ks("apps", "./apps", "  dependsOn:\n    - name: \"\"\n"),
		"apps/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
	})
	require.NoError(t, ends(t, root))
	out, err := fluxrepo.Graph(t.Context(), filepath.Join(root, "clusters/c"), layering.GraphTree, fluxrepo.WithRoot(root))
	require.NoError(t, err)
	assert.Contains(t, string(out), "(not in the platform)")
}
