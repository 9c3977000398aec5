package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	// Ports and temp dirs change from run to run; digests must not.
	got := regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAll(out.Bytes(), []byte("REGISTRY"))
	got = regexp.MustCompile(`/tmp/fluxpack-demo-\d+`).ReplaceAll(got, []byte("WORK"))
	testutil.Golden(t, "demo", got)
}
