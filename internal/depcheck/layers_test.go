package depcheck_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/fluxpack/fluxpack/"

// tiers are fluxpack's packages by job, in the order data flows: a
// package imports only packages of a lower tier. Foundation helpers
// (internal/…) are below everything; the model (layering) is below the
// file formats (stackfile) and renderers; the readers of existing trees (fluxrepo,
// argocd) are below the checker (lint); the checker below the comparer
// (review); everything below the command line. A package not listed
// fails the test: give it its tier with its job.
var tiers = [][]string{
	// Foundation: no fluxpack package beyond these.
	{"internal/errdefs", "internal/yamlutil", "internal/testhook", "internal/parallel", "internal/memo", "internal/suggest", "internal/kinds",
		"internal/stackpath", "internal/sensitive", "internal/gittree", "internal/startup", "internal/release", "internal/preview",
		"oci/internal/regutil"},
	// Writing files atomically, reading input files; the strict decoder of
	// fluxpack's own files (stack and fleet files), on errdefs and yamlutil.
	{"internal/atomicfile", "internal/inputfile", "internal/strictyaml"},
	// Variables and IaC outputs; the registry client.
	{"substitute", "oci", "oci/registry"},
	{"outputs", "oci/cosign", "oci/notation"},
	// The engine: what kustomize- and helm-controller apply.
	{"fluxbuild"},
	// The model: the builder, the plan and its graph, wake objects.
	{"layering"},
	// The file formats: stack files, read into and written from the model.
	// (The fleet file is package fleet's, with the fleet model.)
	{"stackfile"},
	// Rendering a stack to a folder: manifests, Secrets, wake, verify.
	{"render"},
	// Beside the engine: which chart a HelmRelease installs; sources
	// fetched as source-controller fetches them; fleets of stacks (the
	// fleet model and file, rendered and pushed per cluster).
	{"charts", "sources", "fleet", "fluxpatch", "status"},
	// Readers of existing trees.
	{"fluxrepo", "argocd", "bootstrap"},
	// The checker.
	{"lint"},
	// The comparer.
	{"review"},
	// The command line.
	{"internal/cli"},
	{"cmd/fluxpack"},
}

// outside are packages outside the flow: test helpers, tests' own
// programs, benches, examples and tools. They may import anything but
// internal/cli, which only programs (package main: cmd/fluxpack, the demo,
// the docs generator) import.
func outside(pkg string) bool {
	for _, p := range []string{"internal/testutil", "internal/api", "internal/depcheck", "internal/modtest", "e2e", "bench", "examples", "hack", "action"} {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// TestImportsFlowOneWay fails when a package imports a package of its own
// or a higher tier (a reader importing the checker, the model importing a
// renderer, anything importing the command line), and when a package is
// in no tier.
func TestImportsFlowOneWay(t *testing.T) {
	tier := map[string]int{}
	for i, ps := range tiers {
		for _, p := range ps {
			tier[p] = i
		}
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.CommandContext(t.Context(), goBin, "list", "-f", `{{.ImportPath}} {{.Name}} {{join .Imports " "}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], module)
		if !ok {
			continue
		}
		seen[pkg] = true
		name, imports := f[1], f[2:]
		if outside(pkg) {
			for _, imp := range imports {
				if imp == module+"internal/cli" && name != "main" {
					t.Errorf("%s imports internal/cli: only cmd/fluxpack does", pkg)
				}
			}
			continue
		}
		mine, ok := tier[pkg]
		if !ok {
			t.Errorf("package %s is in no tier: add it to tiers with its job", pkg)
			continue
		}
		for _, imp := range imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if theirs, ok := tier[dep]; !ok || theirs >= mine {
				t.Errorf("%s (tier %d) imports %s (tier %d): data flows the other way", pkg, mine, dep, theirs)
			}
		}
	}
	for p := range tier {
		if !seen[p] {
			t.Errorf("tiers name %s, which is no package", p)
		}
	}
}
