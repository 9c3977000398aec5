package layering_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// layering renders and lints; it must not be able to push or call a
// cluster. This fails if it (or anything it imports) pulls in an OCI
// client, and if its own code imports a network package. Kubernetes'
// client packages are linked (Helm's SDK, which fluxbuild renders charts
// with, imports them for its lookup function and its kube client), but
// only in Helm's client-only dry-run, which puts a printing fake in place
// of the kube client and gives lookup nothing to call, as `helm template`
// does.
func TestDepcheck(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), goBin, append([]string{"list"}, args...)...).Output()
		require.NoError(t, err, "go list %v", args)
		return strings.Fields(string(out))
	}
	const pkg = "github.com/fluxpack/fluxpack/layering"
	forbidden := []string{
		"github.com/fluxpack/fluxpack/oci",
		"github.com/fluxpack/fluxpack/internal/cli",
		"github.com/google/go-containerregistry",
		"github.com/fluxcd/pkg/oci",
		"github.com/fluxcd/pkg/kustomize", // fluxbuild is the one kustomize engine
	}
	for _, dep := range list("-deps", pkg) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("layering depends on %s", dep)
			}
		}
	}
	for _, imp := range list("-f", `{{join .Imports " "}}`, pkg) {
		// net/url only parses (the wake receiver's URL): it calls nothing.
		if (imp == "net" || strings.HasPrefix(imp, "net/")) && imp != "net/url" || imp == "os/exec" {
			t.Errorf("layering imports %s", imp)
		}
	}
}
