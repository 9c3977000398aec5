package review_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/review"
)

// ChangedSince, which writes nothing, finds what ChangedFiles finds
// between the revision Extract writes and the working tree: for every
// named change of the fixture, committed or not, and for a file removed,
// made executable, turned into a link and ignored, and below the
// repository's top (--root).
func TestChangedSinceMatchesExtract(t *testing.T) {
	changes, err := os.ReadDir(filepath.Join("testdata", "changes"))
	require.NoError(t, err)
	var tested int
	for _, c := range changes {
		for _, commit := range []bool{false, true} {
			dir, baseCommit := gitFixture(t, c.Name(), commit)
			extra := func() {}
			if c.Name() == "vars" && !commit {
				extra = func() {
					require.NoError(t, os.Remove(filepath.Join(dir, "README.md")))
					require.NoError(t, os.Chmod(filepath.Join(dir, "clusters", "prod", "apps.yaml"), 0o755))
					require.NoError(t, os.Remove(filepath.Join(dir, "apps", "prod", "kustomization.yaml")))
					require.NoError(t, os.Symlink("../base/web/kustomization.yaml", filepath.Join(dir, "apps", "prod", "kustomization.yaml")))
					require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.out\n"), 0o644))
					require.NoError(t, os.WriteFile(filepath.Join(dir, "render.out"), []byte("ignored"), 0o644))
				}
			}
			extra()
			rev := review.Revision{Name: "base", Commit: baseCommit}
			top, cleanup, err := review.Extract(t.Context(), dir, rev, t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { _ = cleanup() })
			for _, sub := range []string{".", "clusters"} {
				want, err := review.ChangedFiles(filepath.Join(top, sub), filepath.Join(dir, sub))
				require.NoError(t, err)
				got, err := review.ChangedSince(filepath.Join(dir, sub), rev)
				require.NoError(t, err)
				assert.Equal(t, want, got, "change %s (committed %v) under %s", c.Name(), commit, sub)
				if sub == "." && !commit {
					require.NotEmpty(t, want, "change %s changes files", c.Name())
				}
				tested++
			}
		}
	}
	require.Greater(t, tested, 10)
}
