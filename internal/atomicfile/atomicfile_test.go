package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.yaml")
	require.NoError(t, atomicfile.WriteFile(p, []byte("a: b\n"), 0o600))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "a: b\n", string(data))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assertOnly(t, filepath.Join(dir, "sub"), "f.yaml")
}

func TestStageAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	st, err := atomicfile.Stage(p, []byte("new"), 0o644)
	require.NoError(t, err)
	st.Abort()
	require.NoError(t, st.Commit(), "Commit after Abort does nothing")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(data), "Abort keeps the old content")
	assertOnly(t, dir, "f")
}

func TestStageDir(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")

	// A new directory.
	st, err := atomicfile.StageDir(dst)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(st.Path(), "a"), []byte("1"), 0o644))
	_, err = os.Stat(dst)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is in place before Commit")
	require.NoError(t, st.Commit())
	st.Abort() // a no-op after Commit
	assertOnly(t, dst, "a")
	fi, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())

	// Replacing it whole.
	st, err = atomicfile.StageDir(dst)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(st.Path(), "b"), []byte("2"), 0o644))
	require.NoError(t, st.Commit())
	assertOnly(t, dst, "b")
	assertOnly(t, parent, "out")

	// Abandoned: the old one stays, the staged one goes.
	st, err = atomicfile.StageDir(dst)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(st.Path(), "c"), []byte("3"), 0o644))
	st.Abort()
	assertOnly(t, dst, "b")
	assertOnly(t, parent, "out")
}

// assertOnly checks that dir holds exactly names: nothing staged is left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.Equal(t, names, got, "entries of %s", dir)
}

// An abandoned stage removes the directories it made for itself, not one
// that held something else by then.
func TestAbortRemovesMadeDirs(t *testing.T) {
	parent := t.TempDir()
	st, err := atomicfile.StageDir(filepath.Join(parent, "a", "b", "out"))
	require.NoError(t, err)
	st.Abort()
	assertOnly(t, parent)

	f, err := atomicfile.Stage(filepath.Join(parent, "x", "y", "secret.yaml"), []byte("s"), 0o600)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(parent, "x", "other"), nil, 0o644))
	f.Abort()
	assertOnly(t, parent, "x")
	assertOnly(t, filepath.Join(parent, "x"), "other")
}
