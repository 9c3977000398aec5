package cli_test

import (
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
// diff, list, lint); render, pull and outputs write to -d/--output-dir and
// import to --output-file. For one release the old -o/--output of those
// four still works: the same stdout, the same files, the same stderr after
// one notice naming the new flag.
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

	// In args, $FLAG is the new or the old flag and $OUT where it writes.
	tests := []struct {
		name     string
		args     []string
		new, old string
		notice   string // the notice's first words
	}{
		{name: "render", args: []string{"render", "-f", stack, "$FLAG", "$OUT"}, new: "-d", old: "-o", notice: "Flag -o/--output has been deprecated, use -d/--output-dir"},
		{name: "render-long", args: []string{"render", "-f", stack, "$FLAG", "$OUT"}, new: "--output-dir", old: "--output", notice: "Flag -o/--output has been deprecated, use -d/--output-dir"},
		{name: "pull", args: []string{"pull", url, "$FLAG", "$OUT"}, new: "-d", old: "-o", notice: "Flag -o/--output has been deprecated, use -d/--output-dir"},
		{name: "outputs", args: []string{"outputs", tf, "--name", "cluster-vars", "$FLAG", "$OUT"}, new: "--output-dir", old: "-o", notice: "Flag -o/--output has been deprecated, use -d/--output-dir"},
		{name: "import", args: []string{"import", filepath.Join(fluxEx, "clusters", "staging"), "--root", fluxEx, "$FLAG", "$OUT"}, new: "--output-file", old: "-o", notice: "Flag -o/--output has been deprecated, use --output-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				stdout, stderr string
				files          map[string]string
			}
			spell := func(flag string) result {
				out := filepath.Join(t.TempDir(), "out")
				args := strings.NewReplacer("$FLAG", flag, "$OUT", out)
				argv := make([]string, len(tt.args))
				for i, a := range tt.args {
					argv[i] = args.Replace(a)
				}
				stdout, stderr, code := run(t, argv...)
				require.Equal(t, cli.ExitOK, code, "fluxpack %s: stderr:\n%s", strings.Join(argv, " "), stderr)
				fi, err := os.Stat(out)
				require.NoError(t, err, "fluxpack %s wrote nothing", strings.Join(argv, " "))
				files := map[string]string{}
				if fi.IsDir() {
					files = testutil.ReadFiles(t, out)
				} else {
					data, err := os.ReadFile(out)
					require.NoError(t, err)
					files[""] = string(data)
				}
				hide := strings.NewReplacer(out, "OUT", root, "ROOT", reg.Host, "REGISTRY")
				return result{hide.Replace(stdout), hide.Replace(stderr), files}
			}
			want, got := spell(tt.new), spell(tt.old)
			assert.NotContains(t, want.stderr, "deprecated", "the new spelling %s", tt.new)
			notice, rest, _ := strings.Cut(got.stderr, "\n")
			assert.True(t, strings.HasPrefix(notice, tt.notice), "the old spelling %s: first line of stderr %q, want %q…", tt.old, notice, tt.notice)
			assert.Equal(t, want.stderr, rest, "stderr after the notice")
			assert.Equal(t, want.stdout, got.stdout, "stdout")
			assert.Equal(t, want.files, got.files, "files written")
			testutil.Golden(t, "flags/"+tt.name, []byte(got.stdout+"--- stderr ---\n"+got.stderr))
		})
	}
}

// TestOutputFlagErrors: the old and the new spelling together are refused,
// and the old one is hidden from help.
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
		{name: "render-both", args: []string{"render", "-f", stack, "-d", filepath.Join(out, "a"), "-o", filepath.Join(out, "b")}, stderr: "give -d/--output-dir only: -o/--output is its deprecated spelling"},
		{name: "import-both", args: []string{"import", filepath.Join(fluxEx, "clusters", "staging"), "--root", fluxEx, "--output-file", filepath.Join(out, "a.yaml"), "-o", filepath.Join(out, "b.yaml")}, stderr: "give --output-file only"},
		{name: "lint-bad-output", args: []string{"lint", "-f", stack, "-o", "yaml"}, stderr: `invalid --output "yaml"`},
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
