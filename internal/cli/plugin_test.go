package cli_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
)

func TestNameFor(t *testing.T) {
	for argv0, want := range map[string]string{
		"fluxpack":                           "fluxpack",
		"/usr/local/bin/fluxpack":            "fluxpack",
		"flux-pack":                          "flux pack",
		"/home/me/.fluxcd/plugins/flux-pack": "flux pack",
		"./bin/fluxpack-dev":                 "fluxpack",
		"flux-pack.exe":                      "flux pack",
	} {
		require.Equal(t, want, cli.NameFor(argv0), argv0)
	}
}

// As the Flux CLI plugin, usage lines name the command as typed after flux.
func TestMainAsPluginUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cli.MainAs(t.Context(), "flux pack", "v1.2.3", []string{"lint", "--help"}, &out, &errOut)
	require.Equal(t, cli.ExitOK, code, errOut.String())
	require.Contains(t, out.String(), "Usage:\n  flux pack lint [")

	out.Reset()
	code = cli.MainAs(t.Context(), "flux pack", "v1.2.3", []string{"version"}, &out, &errOut)
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, "v1.2.3\n", out.String())
}
