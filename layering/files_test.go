package layering_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

// Bad stacks give named errors and write nothing.
func TestRenderFileBadStacks(t *testing.T) {
	tests := []struct {
		file string
		kind error
		want []string
	}{
		{"cycle.yaml", layering.ErrCycle, []string{`testdata/stacks/cycle.yaml:7: layer "crds": dependency cycle crds -> crs -> operator -> crds`}},
		{"unknown-field.yaml", layering.ErrInvalidStack, []string{`testdata/stacks/unknown-field.yaml:8: unknown field "pruen" in spec.layers[0]`}},
		{"bad-name.yaml", layering.ErrInvalidName, []string{
			`testdata/stacks/bad-name.yaml:7: layer "CRDs": name must match`,
			`testdata/stacks/bad-name.yaml:8: layer "crds_2": name must match`,
		}},
		{"missing-path.yaml", layering.ErrMissingPath, []string{
			`testdata/stacks/missing-path.yaml:8: layer "operator": path "./operator" is not a directory under testdata/stacks`,
			`testdata/stacks/missing-path.yaml:9: layer "crs": path "./crs" is not a directory under testdata/stacks`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := layering.RenderFile(filepath.Join("testdata", "stacks", tt.file), out)
			require.ErrorIs(t, err, tt.kind, "RenderFile(%s)", tt.file)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			_, statErr := os.Stat(out)
			assert.ErrorIs(t, statErr, os.ErrNotExist, "a bad stack wrote %s", out)
			entries, _ := os.ReadDir(filepath.Dir(out))
			assert.Empty(t, entries, "no temporary directory left")
		})
	}
}

func TestRenderFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	plan, err := layering.RenderFile("testdata/stacks/external-secrets.yaml", out)
	require.Error(t, err, "its layer paths do not exist next to it")
	require.Nil(t, plan)

	stackDir := t.TempDir()
	data, err := os.ReadFile("testdata/stacks/external-secrets.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stackDir, "stack.yaml"), data, 0o644))
	for _, d := range []string{"crds", "operator", "crs"} {
		require.NoError(t, os.Mkdir(filepath.Join(stackDir, d), 0o755))
	}
	plan, err = layering.RenderFile(filepath.Join(stackDir, "stack.yaml"), out)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(out, "layers", "crs.yaml"))
	require.NoError(t, err)
	files, err := plan.Files()
	require.NoError(t, err)
	assert.Equal(t, string(files[4].Data), string(got))
}
