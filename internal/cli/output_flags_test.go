package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestOldOutputSpellings: -o is the output format wherever it exists (push,
// diff, list, lint, graph, version); render, pull and outputs write to
// -d/--output-dir and import to --output-file. The old -o/--output of those
// four, deprecated for a release, is refused now: exit 2, an error naming
// the flag to use, nothing written (`outputs … -o json` used to write a
// directory named json).
func TestOldOutputSpellings(t *testing.T) {
	root := testutil.RepoRoot(t)
	reg := testutil.NewRegistry(t)
	src := t.TempDir()
	testutil.WriteFiles(t, src, tree)
	url := "oci://" + reg.Host + "/platform:v1"
	_, stderr, code := run(t, "push", src, url)
	require.Equal(t, cli.ExitOK, code, "push: %s", stderr)
	stack := filepath.Join(root, "examples", "external-secrets", "platform", "stack.yaml")
	tf := filepath.Join(root, "outputs", "testdata", "outputs", "terraform.json")
	fluxEx := filepath.Join(root, "fluxrepo", "testdata", "repos", "fluxcd-example")

	tests := []struct {
		name string
		args []string // the output is appended
		want string   // in stderr
	}{
		{name: "render", args: []string{"render", "-f", stack, "-o"}, want: "-o is the output format in fluxpack, no longer the output directory, and render has no format to choose: use -d/--output-dir "},
		{name: "render-long", args: []string{"render", "-f", stack, "--output"}, want: "use -d/--output-dir "},
		{name: "pull", args: []string{"pull", url, "-o"}, want: "use -d/--output-dir "},
		{name: "outputs", args: []string{"outputs", tf, "--name", "cluster-vars", "-o"}, want: "use -d/--output-dir "},
		{name: "outputs-json", args: []string{"outputs", tf, "--name", "cluster-vars", "-o"}, want: "use -d/--output-dir "},
		{name: "import", args: []string{"import", filepath.Join(fluxEx, "clusters", "staging"), "--root", fluxEx, "-o"}, want: "no longer the output file, and import has no format to choose: use --output-file "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if tt.name == "outputs-json" {
				out = "json" // the case: relative, in the working directory
				t.Chdir(dir)
			}
			stdout, stderr, code := run(t, append(tt.args, out)...)
			assert.Equal(t, cli.ExitError, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.want+out)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "the old spelling wrote something")
		})
	}
}

// TestOutputFlagErrors: a bad format, or a path where -o wants a format, is
// refused with an error that says so; the removed -o is hidden from help.
func TestOutputFlagErrors(t *testing.T) {
	root := testutil.RepoRoot(t)
	out := t.TempDir()
	stack := filepath.Join(root, "examples", "external-secrets", "platform", "stack.yaml")
	fluxEx := filepath.Join(root, "fluxrepo", "testdata", "repos", "fluxcd-example")
	tests := []struct {
		name   string
		args   []string
		stderr string // a substring stderr must hold
	}{
		{name: "render-both", args: []string{"render", "-f", stack, "-d", filepath.Join(out, "a"), "-o", filepath.Join(out, "b")}, stderr: "no longer the output directory, and render has no format to choose: use -d/--output-dir "},
		{name: "import-both", args: []string{"import", filepath.Join(fluxEx, "clusters", "staging"), "--root", fluxEx, "--output-file", filepath.Join(out, "a.yaml"), "-o", filepath.Join(out, "b.yaml")}, stderr: "no longer the output file, and import has no format to choose: use --output-file "},
		{name: "lint-bad-output", args: []string{"lint", "-f", stack, "-o", "yaml"}, stderr: `invalid -o/--output "yaml": want "json" or nothing`},
		{name: "lint-output-dir", args: []string{"lint", "-f", stack, "-o", "./out"}, stderr: "-o is the output format, no longer a directory or file to write to"},
		{name: "graph-output-dir", args: []string{"graph", "-f", stack, "-o", "out/"}, stderr: "-o is the output format, no longer a directory or file to write to"},
		{name: "graph-both", args: []string{"graph", "-f", stack, "-o", "dot", "--format", "tree"}, stderr: "give -o/--output only: --format is its deprecated spelling"},
		{name: "version-bad-output", args: []string{"version", "-o", "yaml"}, stderr: `invalid -o/--output "yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			assert.Equal(t, cli.ExitError, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(tt.args, " "), stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.stderr)
			testutil.Golden(t, "flags/"+tt.name, []byte(strings.NewReplacer(root, "ROOT", out, "OUT").Replace(stderr)))
		})
	}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Empty(t, entries, "a refused command wrote something")

	for _, cmd := range []string{"render", "pull", "outputs", "import"} {
		stdout, _, code := run(t, cmd, "--help")
		require.Equal(t, cli.ExitOK, code)
		assert.NotContains(t, stdout, "-o, --output", "%s --help shows the deprecated -o", cmd)
	}
}

// version -o json prints an object programs read.
func TestVersionJSON(t *testing.T) {
	stdout, stderr, code := run(t, "version", "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	var v struct{ Version, Go string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
	assert.Equal(t, "test", v.Version)
	assert.True(t, strings.HasPrefix(v.Go, "go"), v.Go)
	stdout, _, code = run(t, "version")
	require.Equal(t, cli.ExitOK, code)
	assert.Equal(t, "test\n", stdout)
}
