package oci

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHandoff runs Push's two passes, the hash handing its files to the
// compressor, with budgets that carry every file, some and none, and checks
// that the compressor makes the layer Build makes, of the stream the hash
// hashed.
func TestHandoff(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%3), fmt.Sprintf("f%02d.yaml", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, bytes.Repeat(fmt.Appendf(nil, "key%d: value\n", i), 50*(i+1)), 0o644))
	}
	// Streamed, never read ahead: always read again by the compressor.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d1", "big.yaml"), bytes.Repeat([]byte("big: true\n"), inlineLimit/8), 0o644))
	o, err := collect(nil, []PushOption(nil), func(x PushOption, o *options) error { return x.applyPush(o) })
	require.NoError(t, err)
	tr, err := scanTree(dir, o, false)
	require.NoError(t, err)
	built, err := (&archiver{display: dir}).compress(tr)
	require.NoError(t, err)

	for _, budget := range []int64{handoffBudget, 8 << 10, 0} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			h := newHandoff(tr)
			h.budget = budget
			c := (&archiver{display: dir}).startCompress(tr, false, h)
			defer c.discard()
			content, err := (&archiver{display: dir, checkSecrets: true, handoff: h}).contentDigest(tr)
			require.NoError(t, err)
			_, layer, compressed, err := c.wait()
			require.NoError(t, err)
			assert.Equal(t, content, compressed, "content digest of the hash vs of the compressor")
			assert.Equal(t, built.digest, layer, "layer digest vs Build's")
			assert.Zero(t, h.inFlight.Load(), "bytes left in the handoff")
		})
	}
}

// TestHandoffHashFails: when the hashing pass stops at a bad file, the
// compressor reads the rest itself and ends; nothing waits forever.
func TestHandoffHashFails(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("c: 1\n"), 0o644))
	o, err := collect(nil, []PushOption(nil), func(x PushOption, o *options) error { return x.applyPush(o) })
	require.NoError(t, err)
	tr, err := scanTree(dir, o, false)
	require.NoError(t, err)
	h := newHandoff(tr)
	c := (&archiver{display: dir}).startCompress(tr, false, h)
	defer c.discard()
	_, err = (&archiver{display: dir, checkSecrets: true, handoff: h}).contentDigest(tr)
	require.ErrorIs(t, err, ErrPlaintextSecret)
	_, _, _, err = c.wait()
	require.NoError(t, err, "the compressor does not check Secrets; it only must end")
}
