package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	// Ports and temp dirs change from run to run, and with the port the
	// rendered OCIRepository and so the digest; run itself checks that the
	// unchanged push and the pull give the first push's digest.
	got := regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAll(out.Bytes(), []byte("REGISTRY"))
	// The work folder is under $TMPDIR, wherever that is.
	work := regexp.QuoteMeta(filepath.Join(os.TempDir(), "fluxpack-demo-"))
	got = regexp.MustCompile(work+`\d+`).ReplaceAll(got, []byte("WORK"))
	got = regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAll(got, []byte("sha256:DIGEST"))
	testutil.Golden(t, "demo", got)
}
