package fleet_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/stackfile"
)

// TestFileReferenceIsCurrent fails when docs/stack.md is not what `make
// docs` writes (go test ./fleet -run TestFileReferenceIsCurrent -update).
func TestFileReferenceIsCurrent(t *testing.T) {
	got, err := fleet.FileReference()
	require.NoError(t, err)
	path := filepath.Join(testutil.RepoRoot(t), "docs", "stack.md")
	if testutil.Update() {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "reading docs/stack.md (run `make docs` to write it)")
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("docs/stack.md is stale; run `make docs` (-committed +generated):\n%s", diff)
	}
}

var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```$")

// Every YAML block of docs/stack.md is a Stack or Fleet file that loads
// and builds with the real loader; a Fleet runs the Stack before it, saved
// as stack.yaml beside it.
func TestFileReferenceExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "stack.md"))
	require.NoError(t, err)
	blocks := yamlBlock.FindAllSubmatchIndex(doc, -1)
	require.NotEmpty(t, blocks, "docs/stack.md has no ```yaml block")
	dir := t.TempDir()
	kinds := map[string]int{}
	for i, m := range blocks {
		// Blank lines before the block make errors give docs/stack.md's lines.
		data := append(bytes.Repeat([]byte("\n"), bytes.Count(doc[:m[2]], []byte("\n"))), doc[m[2]:m[3]]...)
		kind := kindOf(data)
		kinds[kind]++
		switch kind {
		case stackfile.Kind:
			b, err := stackfile.Parse("docs/stack.md", data)
			require.NoError(t, err, "yaml block %d of docs/stack.md", i+1)
			_, err = b.Build()
			require.NoError(t, err, "yaml block %d of docs/stack.md", i+1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), data, 0o644))
		case fleet.Kind:
			f, err := fleet.Parse(filepath.Join(dir, "fleet.yaml"), data)
			require.NoError(t, err, "yaml block %d of docs/stack.md", i+1)
			require.NoError(t, f.Check(), "yaml block %d of docs/stack.md, with the Stack before it as stack.yaml", i+1)
			for _, c := range f.Clusters() {
				_, err := f.Artifact(c)
				assert.NoError(t, err, "yaml block %d of docs/stack.md: cluster %s", i+1, c)
			}
		default:
			t.Errorf("yaml block %d of docs/stack.md is neither a Stack nor a Fleet file:\n%s", i+1, data)
		}
	}
	assert.Equal(t, 1, kinds[stackfile.Kind], "Stack examples in docs/stack.md")
	assert.Equal(t, 1, kinds[fleet.Kind], "Fleet examples in docs/stack.md")
}

var kindLine = regexp.MustCompile(`(?m)^kind: *(\S+)`)

func kindOf(data []byte) string {
	if m := kindLine.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}
