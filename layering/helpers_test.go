package layering_test

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func kustomizeRef(kind, name string) kustomizev1.SubstituteReference {
	return kustomizev1.SubstituteReference{Kind: kind, Name: name}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testutil.WriteFiles(t, dir, files)
}
