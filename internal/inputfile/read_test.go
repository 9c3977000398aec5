package inputfile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// ReadManifest gives what os.ReadFile gives: the bytes of files of every size
// around the buffer's, and the same errors.
func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 64<<10 - 1, 64 << 10, 64<<10 + 1, 300 << 10} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if size > 0 {
			want[size/2] = 'x'
		}
		require.NoError(t, os.WriteFile(p, want, 0o644))
		got, err := inputfile.ReadManifest(p)
		require.NoError(t, err)
		assert.Equal(t, want, got, "size %d", size)
		assert.Equal(t, len(got), cap(got), "size %d: only the file's bytes are kept", size)
	}

	_, err := inputfile.ReadManifest(filepath.Join(dir, "missing"))
	_, osErr := os.ReadFile(filepath.Join(dir, "missing"))
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	assert.Equal(t, osErr.Error(), err.Error())

	_, err = inputfile.ReadManifest(dir)
	_, osErr = os.ReadFile(dir)
	require.Error(t, err)
	assert.Equal(t, osErr.Error(), err.Error())
}

// BenchmarkReadManifest reads 1,000 small files with ReadManifest and with
// os.ReadFile:
//
//	go test ./internal/inputfile -run '^$' -bench ReadManifest
func BenchmarkReadManifest(b *testing.B) {
	dir := b.TempDir()
	var names []string
	for i := range 1000 {
		p := filepath.Join(dir, "f"+string(rune('a'+i%26))+string(rune('a'+i/26%26)))
		require.NoError(b, os.WriteFile(p, bytes.Repeat([]byte("apiVersion: v1\n"), 80), 0o644))
		names = append(names, p)
	}
	for name, read := range map[string]func(string) ([]byte, error){"ReadManifest": inputfile.ReadManifest, "os": os.ReadFile} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for _, n := range names {
					if _, err := read(n); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// ReadRegular reads a regular file within the limit into the caller's
// buffer, and only reports the mode and size of anything else.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("apiVersion: v1\n"), 0o755))
	var allocated []int
	alloc := func(size int) []byte { allocated = append(allocated, size); return make([]byte, size, 4096) }

	c, err := inputfile.ReadRegular(p, 15, alloc)
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: v1\n", string(c.Data))
	assert.Equal(t, 4096, cap(c.Data), "read into the buffer alloc gave")
	assert.Equal(t, fs.FileMode(0o755), c.Mode)
	assert.Equal(t, int64(15), c.Size)

	c, err = inputfile.ReadRegular(p, 14, alloc)
	require.NoError(t, err)
	assert.Nil(t, c.Data, "over the limit: not read")
	assert.Equal(t, int64(15), c.Size)
	assert.Equal(t, []int{15}, allocated, "no buffer asked for a file over the limit")

	c, err = inputfile.ReadRegular(dir, 1<<20, alloc)
	require.NoError(t, err)
	assert.True(t, c.Mode.IsDir(), "mode %v", c.Mode)
	assert.Nil(t, c.Data)

	_, err = inputfile.ReadRegular(filepath.Join(dir, "missing"), 1<<20, alloc)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, filepath.Join(dir, "missing"), pe.Path)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// Equal compares whole files, past the first buffer too, and names a
// file it cannot read.
func TestEqual(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 10<<10) // 160 KiB: three buffers
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	a := write("a", big)
	same := write("same", bytes.Clone(big))
	late := bytes.Clone(big)
	late[len(late)-1] = 'x' // differs in the last buffer only
	lastByte := write("late", late)
	prefix := write("prefix", big[:len(big)-1])
	longer := write("longer", append(bytes.Clone(big), '\n'))
	empty, empty2 := write("empty", nil), write("empty2", nil)
	chunk := write("chunk", big[:64<<10]) // exactly one buffer
	chunk2 := write("chunk2", big[:64<<10])
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{a, same, true}, {a, lastByte, false}, {a, prefix, false}, {prefix, a, false},
		{a, longer, false}, {empty, empty2, true}, {empty, a, false}, {chunk, chunk2, true}, {chunk, a, false},
	} {
		got, err := inputfile.Equal(tc.a, tc.b)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s vs %s", filepath.Base(tc.a), filepath.Base(tc.b))
	}
	_, err := inputfile.Equal(a, filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "missing")
}
