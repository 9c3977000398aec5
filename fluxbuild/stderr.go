package fluxbuild

import (
	"bytes"
	"io"
	"os"
	"strings"
)

// withStderr runs fn with os.Stderr sent to a pipe, then gives printed
// what fn wrote there. kustomize prints its deprecation warnings to
// os.Stderr with no option to turn them off (kubernetes-sigs/kustomize
// #5452); the caller holds kustomizeMu, so no other build swaps it
// meanwhile. Without a pipe, fn runs as it is.
func withStderr(printed func(string), fn func()) {
	r, w, err := os.Pipe()
	if err != nil {
		fn()
		return
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&buf, r)
		close(done)
	}()
	saved := os.Stderr
	os.Stderr = w
	func() {
		defer func() { os.Stderr = saved }()
		fn()
	}()
	_ = w.Close()
	<-done
	_ = r.Close()
	printed(buf.String())
}

// isDeprecationWarning reports whether line is one of the warnings
// kustomize prints about the deprecated fields of g's kustomizations.
func (g *generated) isDeprecationWarning(line string) bool {
	line = strings.TrimSuffix(line, "\n")
	for _, d := range g.deprecated {
		if d.warning == line {
			return true
		}
	}
	return false
}
