package depcheck_test

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// budgets is how many packages `go list -deps` may count for each public
// package (issue 27). Measured when set: oci 280, outputs 404,
// substitute 402, layering 410; sources 502 (oci, go-git and the source
// API types); oci/registry 218 (go-containerregistry's registry and the
// standard library's HTTP server).
var budgets = []struct {
	pkg    string
	budget int
}{
	{"oci", 320},
	{"oci/registry", 240},
	{"outputs", 420},
	{"substitute", 420},
	{"layering", 450},
	{"sources", 540},
	{"status", 600}, // issue 43's bound; 492 when set (client-go's dynamic client, discovery and watch tools)
}

// TestDependencyBudgets fails when a package's dependencies grow past its
// budget, and names the modules that bring the most of them.
func TestDependencyBudgets(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		t.Skipf("no go command at %s (%v): the dependency budgets need `go list -deps`", goBin, err)
	}
	for _, tt := range budgets {
		t.Run(tt.pkg, func(t *testing.T) {
			t.Parallel()
			deps := goListDeps(t, goBin, "github.com/fluxpack/fluxpack/"+tt.pkg)
			if len(deps) > tt.budget {
				t.Errorf("go list -deps ./%s: %d packages, over its budget of %d; the most come from:\n%s",
					tt.pkg, len(deps), tt.budget, heaviest(deps, 10))
			}
		})
	}
}

func goListDeps(t *testing.T, goBin, pkg string) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-deps", pkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// heaviest lists, most first, the n repository paths (host/owner/repo)
// with the most packages among deps, the standard library left out.
func heaviest(deps []string, n int) string {
	counts := map[string]int{}
	for _, d := range deps {
		parts := strings.Split(d, "/")
		if strings.Contains(parts[0], ".") {
			counts[strings.Join(parts[:min(3, len(parts))], "/")]++
		}
	}
	repos := slices.Collect(maps.Keys(counts))
	slices.SortFunc(repos, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	var b strings.Builder
	for _, r := range repos[:min(n, len(repos))] {
		fmt.Fprintf(&b, "\t%s: %d\n", r, counts[r])
	}
	return b.String()
}
