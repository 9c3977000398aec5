package fluxbuild

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// Every manifest of the project's test repositories reads to the same
// nodes, comments included, whether plain documents are decoded by hand
// (yamlutil.DecodePlain) or all by the parser; and the hand decoder reads
// most of them.
func TestPlainDecodeReadsAsTheParser(t *testing.T) {
	var files []string
	for _, root := range []string{"../lint/testdata", "../fluxrepo/testdata", "../review/testdata", "../examples", "testdata"} {
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return err
		}))
	}
	require.Greater(t, len(files), 200)
	plain := 0
	count := decodePlain
	t.Cleanup(func() { decodePlain = count })
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		decodePlain = func(text []byte, line int) *yaml.Node {
			n := count(text, line)
			if n != nil {
				plain++
			}
			return n
		}
		got, gotErr := readManifests(f, data)
		decodePlain = func([]byte, int) *yaml.Node { return nil }
		want, wantErr := readManifests(f, data)
		if wantErr != nil {
			assert.EqualError(t, gotErr, wantErr.Error(), f)
			continue
		}
		require.NoError(t, gotErr, f)
		assert.Equal(t, want, got, f)
	}
	t.Logf("%d files, %d documents decoded by hand", len(files), plain)
	assert.Greater(t, plain, len(files)/2, "most fixture documents are plain")
}
