package layering_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// layering is the model and the builder: it must not be able to push or
// call a cluster, and it links neither Helm nor the build engine (a
// platform's Go tooling imports it for the builder alone). This fails if it
// (or anything it imports) pulls in an OCI client, Helm, client-go or the
// build engine, and if its own code imports a network package.
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
		// The model renders no chart and builds nothing: lint and fluxbuild do.
		"github.com/fluxpack/fluxpack/fluxbuild",
		"github.com/fluxpack/fluxpack/lint",
		"helm.sh/helm",
		"k8s.io/client-go",
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
