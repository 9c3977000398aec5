package inputfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(small, []byte("a: b\n"), 0o644))
	data, err := Read(small)
	require.NoError(t, err)
	require.Equal(t, "a: b\n", string(data))

	edge := filepath.Join(dir, "edge.json")
	require.NoError(t, os.WriteFile(edge, nil, 0o644))
	require.NoError(t, os.Truncate(edge, MaxSize))
	data, err = Read(edge)
	require.NoError(t, err, "exactly MaxSize is allowed")
	require.Len(t, data, MaxSize)

	huge := filepath.Join(dir, "huge.json")
	require.NoError(t, os.WriteFile(huge, nil, 0o644))
	require.NoError(t, os.Truncate(huge, MaxSize+1))
	_, err = Read(huge)
	require.ErrorIs(t, err, ErrTooLarge)
	require.EqualError(t, err, huge+": file too large: 16777217 bytes, over the limit of 16777216 bytes (16 MiB)")

	// A pipe, as from <(terraform output -json): read to its end, or refused
	// past the limit without reading the rest.
	for _, size := range []int{5, MaxSize + 1} {
		fifo := filepath.Join(dir, "fifo")
		os.Remove(fifo)
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer w.Close()
			w.Write(make([]byte, size)) // stops with EPIPE when the reader gives up
		}()
		data, err = Read(fifo)
		if size > MaxSize {
			require.ErrorIs(t, err, ErrTooLarge)
		} else {
			require.NoError(t, err)
			require.Len(t, data, size)
		}
	}

	_, err = Read(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// ReadManifest returns grown buffers to scratch; Equal compares files
// whatever the sizes of the two buffers it gets from there.
func TestEqualWithBuffersOfTwoSizes(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(i)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, data, 0o644))
	require.NoError(t, os.WriteFile(b, data, 0o644))
	for _, sizes := range [][2]int{{128 << 10, 64 << 10}, {64 << 10, 128 << 10}} {
		for _, size := range sizes {
			buf := make([]byte, size)
			scratch.Put(&buf)
		}
		eq, err := Equal(a, b)
		require.NoError(t, err)
		require.True(t, eq, "%v", sizes)
	}
}
