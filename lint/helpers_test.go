package lint_test

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
)

func kustomizeRef(kind, name string) kustomizev1.SubstituteReference {
	return kustomizev1.SubstituteReference{Kind: kind, Name: name}
}

// failing is what fails lint in rep: its findings less the hints, which
// the tests of the merge hint (merge_test.go) check.
func failing(rep *lint.Report) []lint.Finding {
	var out []lint.Finding
	for _, f := range rep.Findings {
		if f.Fails() {
			out = append(out, f)
		}
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testutil.WriteFiles(t, dir, files)
}

const registry = "oci://registry.example.com/platform"
