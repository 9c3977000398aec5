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
