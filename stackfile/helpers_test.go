package stackfile_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

// renderPlan is every file of p, each after a "--- path" line.
func renderPlan(t *testing.T, p *layering.Plan) []byte {
	t.Helper()
	files, err := p.Files()
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range files {
		b.WriteString("--- " + f.Path + "\n")
		b.Write(f.Data)
	}
	return []byte(b.String())
}
