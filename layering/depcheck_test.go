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
// cluster. This fails if it (or anything it imports) pulls in an OCI or
// Kubernetes client, and if its own code imports a network package.
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
		"github.com/fluxcd/pkg/kustomize", // imports controller-runtime's client
		"k8s.io/client-go",
		"sigs.k8s.io/controller-runtime",
	}
	for _, dep := range list("-deps", pkg) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("layering depends on %s", dep)
			}
		}
	}
	for _, imp := range list("-f", `{{join .Imports " "}}`, pkg) {
		if imp == "net" || strings.HasPrefix(imp, "net/") || imp == "os/exec" {
			t.Errorf("layering imports %s", imp)
		}
	}
}
