package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestDocsAreCurrent fails when docs/cli is not what `make docs` writes.
func TestDocsAreCurrent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, cli.WriteDocs(dir))
	committed := filepath.Join(testutil.RepoRoot(t), "docs", "cli")
	if diff := cmp.Diff(testutil.ReadFiles(t, committed), testutil.ReadFiles(t, dir)); diff != "" {
		t.Errorf("docs/cli is stale; run `make docs` (-committed +generated):\n%s", diff)
	}
}
