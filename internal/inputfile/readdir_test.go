package inputfile_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// TestReadDir: ReadDir lists what os.ReadDir lists, in its order and with
// its types, and with stat the identity of each entry itself (a symlink's
// own), which Stat gives through a symlink.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	// More names than one getdents buffer holds.
	for i := range 2000 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-long-name-%04d.yaml", 1999-i)), []byte("x"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "link")))
	want, err := os.ReadDir(dir)
	require.NoError(t, err)

	for _, stat := range []bool{false, true} {
		got, err := inputfile.ReadDir(dir, stat)
		require.NoError(t, err, "ReadDir(stat %t)", stat)
		require.Len(t, got, len(want), "ReadDir(stat %t)", stat)
		for i, de := range want {
			assert.Equal(t, de.Name(), got[i].Name, "entry %d (stat %t)", i, stat)
			assert.Equal(t, de.Type(), got[i].Type, "type of %s (stat %t)", de.Name(), stat)
		}
		if !stat || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
			for _, de := range got {
				assert.False(t, de.ID.Known(), "ReadDir(stat %t) on %s: %s has an identity", stat, runtime.GOOS, de.Name)
			}
			continue
		}
		for _, de := range got {
			fi, err := os.Lstat(filepath.Join(dir, de.Name))
			require.NoError(t, err)
			assert.Equal(t, fi.Size(), de.ID.Size, "size of %s", de.Name)
			assert.Equal(t, fi.ModTime().UnixNano(), de.ID.Mtime, "modification time of %s", de.Name)
			assert.NotZero(t, de.ID.Ino, "inode of %s", de.Name)
		}
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		sub, err := inputfile.Stat(filepath.Join(dir, "sub"))
		require.NoError(t, err)
		link, err := inputfile.Stat(filepath.Join(dir, "link"))
		require.NoError(t, err)
		assert.Equal(t, sub, link, "Stat follows the symlink")
	}
	_, err = inputfile.ReadDir(filepath.Join(dir, "absent"), true)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestSettled(t *testing.T) {
	id := inputfile.Identity{Ino: 1, Mtime: 100, Ctime: 200}
	assert.True(t, id.Settled(300, 100), "changed at 200, read at 300, window 100")
	assert.False(t, id.Settled(299, 100), "changed at 200, read at 299, window 100")
	assert.False(t, inputfile.Identity{Mtime: 500, Ctime: 200}.Settled(300, 100), "a modification time after the read")
	assert.False(t, inputfile.Identity{}.Settled(1000, 0), "an unknown identity")
}
