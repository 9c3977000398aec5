package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// docBlock returns the first fenced block of the page (README.md, or a
// page under docs/, relative to the repository root) of the given language
// ("" for a fence with no language) that follows the line holding after and
// contains want.
func docBlock(t *testing.T, page, lang, after, want string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), filepath.FromSlash(page)))
	require.NoError(t, err)
	s := string(data)
	i := strings.Index(s, after)
	require.GreaterOrEqual(t, i, 0, "%s has no %q", page, after)
	var body strings.Builder
	in, info := false, ""
	for _, line := range strings.SplitAfter(s[i:], "\n") {
		fence := strings.HasPrefix(line, "```")
		switch {
		case !in && fence:
			in, info = true, strings.TrimSpace(strings.TrimPrefix(line, "```"))
			body.Reset()
		case in && fence:
			if info == lang && strings.Contains(body.String(), want) {
				return body.String()
			}
			in = false
		case in:
			body.WriteString(line)
		}
	}
	t.Fatalf("%s has no ```%s block holding %q after %q", page, lang, want, after)
	return ""
}

// TestDocWalkThrough runs the walk-through of a stack in docs/builder.md
// (its stack file, then the shell lines: Terraform's outputs written where
// the page writes them, render and push as written, the registry swapped for
// a local one) and pulls the artifact: no sensitive output is in it, and
// neither is the outputs file.
func TestDocWalkThrough(t *testing.T) {
	stack := docBlock(t, "docs/builder.md", "yaml", "# Layers: a race-free bootstrap order", "kind: Stack")
	steps := docBlock(t, "docs/builder.md", "sh", "# Layers: a race-free bootstrap order", "fluxpack push ./platform")
	reg := testutil.NewRegistry(t)
	work := t.TempDir()
	testutil.WriteFiles(t, work, map[string]string{
		"platform/stack.yaml":        stack,
		"platform/crds/crd.yaml":     "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: stores.example.com\nspec:\n  group: example.com\n  names: {kind: Store, plural: stores}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
		"platform/operator/dep.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\n  namespace: default\n",
		"platform/crs/store.yaml":    "apiVersion: example.com/v1\nkind: Store\nmetadata:\n  name: s\n  namespace: default\nspec:\n  region: ${region}\n",
	})
	t.Chdir(work)
	tfJSON := `{
  "region": {"sensitive": false, "type": "string", "value": "eu-west-1"},
  "db_password": {"sensitive": true, "type": "string", "value": "CANARY-readme-db-password"}
}
`
	ran := 0
	for _, line := range strings.Split(steps, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "terraform" && len(fields) == 5 && fields[3] == ">":
			require.NoError(t, os.WriteFile(fields[4], []byte(tfJSON), 0o600))
		case fields[0] == "fluxpack":
			for i, f := range fields {
				fields[i] = strings.Replace(f, "oci://ghcr.io/acme", "oci://"+reg.Host, 1)
			}
			stdout, stderr, code := run(t, fields[1:]...)
			require.Equal(t, 0, code, "%s\nstdout: %s\nstderr: %s", line, stdout, stderr)
			assert.NotContains(t, stdout+stderr, "CANARY")
			ran++
		default:
			t.Fatalf("the walk-through has a line the test cannot run: %q", line)
		}
	}
	require.Equal(t, 2, ran, "render and push ran")

	out := filepath.Join(work, "pulled")
	_, stderr, code := run(t, "pull", "oci://"+reg.Host+"/platform:v1", "-d", out)
	require.Equal(t, 0, code, stderr)
	var files []string
	require.NoError(t, filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.NotContains(t, string(data), "CANARY", "pushed file %s", p)
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	assert.Contains(t, files, "flux/vars/configmap-cluster-vars.yaml", "the plain outputs are pushed as the vars ConfigMap")
	for _, f := range files {
		assert.NotContains(t, f, "terraform", "the outputs file is not pushed")
	}
}

// TestOutputsInsidePushedFolderRefused is an old layout of the walk-through: the
// stack names terraform.json beside it, inside the folder push ships.
// render, push and diff refuse it, naming the file; nothing reaches the
// registry; --allow-secrets lets push through.
func TestOutputsInsidePushedFolderRefused(t *testing.T) {
	reg := testutil.NewRegistry(t)
	work := t.TempDir()
	testutil.WriteFiles(t, work, map[string]string{
		"platform/stack.yaml":   "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: p, namespace: flux-system}\nspec:\n  source: {url: oci://registry.example.com/platform, tag: v1}\n  vars: [{outputs: terraform.json, name: cluster-vars}]\n  layers:\n    - {name: apps, path: ./apps}\n",
		"platform/apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {region: ${region}}\n",
		"platform/terraform.json": `{"region": {"sensitive": false, "type": "string", "value": "eu"},
 "db_password": {"sensitive": true, "type": "string", "value": "CANARY-inside"}}`,
	})
	p := filepath.Join(work, "platform")
	url := "oci://" + reg.Host + "/platform:v1"
	for _, c := range []cmdCase{
		{name: "render", args: []string{"render", "-f", filepath.Join(p, "stack.yaml"), "-d", filepath.Join(p, "flux")}, code: 2, inStderr: filepath.Join(p, "terraform.json") + `: named by Stack "p": spec.vars[0].outputs`},
		{name: "push", args: []string{"push", p, url}, code: 2, inStderr: filepath.Join(p, "terraform.json") + `:2: Terraform/OpenTofu output "db_password"`},
		{name: "diff", args: []string{"diff", p, url}, code: 2, inStderr: filepath.Join(p, "terraform.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr := c.check(t)
			assert.NotContains(t, stdout+stderr, "CANARY")
		})
	}
	assert.NoDirExists(t, filepath.Join(p, "flux"), "render wrote nothing")
	for _, r := range reg.Requests() {
		assert.NotContains(t, r, "/blobs/uploads", "nothing uploaded")
	}
	// The file holding no sensitive value is still refused: the stack names it.
	require.NoError(t, os.WriteFile(filepath.Join(p, "terraform.json"), []byte(`{"region": {"sensitive": false, "type": "string", "value": "eu"}}`), 0o600))
	cmdCase{args: []string{"push", p, url}, code: 2, inStderr: "IaC outputs file"}.check(t)
	cmdCase{args: []string{"push", p, url, "--allow-secrets"}, code: 0, stdout: reg.Host}.check(t)
}

// TestReadmeTourPush: the README's tour pushes with the lines of
// docs/oci.md that TestRegistryServe runs, so they are tested there.
func TestReadmeTourPush(t *testing.T) {
	tour := docBlock(t, "README.md", "sh", "### 3. Push an artifact", "fluxpack registry serve")
	page := docBlock(t, "docs/oci.md", "sh", "# Shipping manifests as OCI artifacts", "fluxpack registry serve")
	assert.Equal(t, page, tour, "the README's tour and docs/oci.md push with different lines")
}

// TestDocLinks: every relative link of README.md and of the pages under
// docs/ names a file that exists and, with a #fragment, a heading of that
// page; the README links to every page under docs/.
func TestDocLinks(t *testing.T) {
	root := testutil.RepoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, page)
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target, frag, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(m[1], "mailto:") {
				continue
			}
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
			}
			if !assert.FileExists(t, file, "%s links to %s", rel, m[1]) || frag == "" {
				continue
			}
			assert.Contains(t, headingSlugs(t, file), frag, "%s links to %s: no such heading", rel, m[1])
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, page := range pages {
		name := "docs/" + filepath.Base(page)
		assert.Contains(t, string(readme), "]("+name+")", "README.md does not link to %s", name)
	}
}

// headingSlugs returns the anchors GitHub makes of a markdown file's
// headings: lower case, punctuation but hyphens dropped, spaces as hyphens.
func headingSlugs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var slugs []string
	inFence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}

// TestReadmeTour runs the README's tour of lint and diff on the repository
// e2e runs in real Flux (e2e/testdata/repos/platform), laid out as flux
// bootstrap lays one out: the entry point at clusters/production, its
// Kustomizations reading GitRepository flux-system, committed on main and
// pushed (origin/main). The change under review makes the custom resources
// depend on the CRDs only and the operator on the namespaces: lint prints
// the finding the README shows, and diff --base origin/main reports what the
// README shows of its report.
func TestReadmeTour(t *testing.T) {
	lintLines := docBlock(t, "README.md", "sh", "### 1. Lint a repository", "fluxpack lint")
	lintShown := docBlock(t, "README.md", "", "### 1. Lint a repository", "[webhook-order]")
	diffLines := docBlock(t, "README.md", "sh", "### 2. Review a change", "fluxpack diff")
	diffShown := docBlock(t, "README.md", "markdown", "### 2. Review a change", "| cluster |")

	work := t.TempDir()
	require.NoError(t, os.CopyFS(work, os.DirFS(filepath.Join(testutil.RepoRoot(t), "e2e", "testdata", "repos", "platform"))))
	entry := filepath.Join(work, "clusters", "production")
	require.NoError(t, os.Rename(filepath.Join(work, "clusters", "e2e"), entry))
	edit := func(file, from, to string) {
		t.Helper()
		p := filepath.Join(entry, file)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(data), from, file)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
	}
	files, err := filepath.Glob(filepath.Join(entry, "*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "kind: OCIRepository") {
			edit(filepath.Base(f), "kind: OCIRepository\n    name: platform\n", "kind: GitRepository\n    name: flux-system\n")
		}
	}
	testutil.Git(t, work, "init", "-q", "-b", "main")
	testutil.Git(t, work, "add", "-A")
	testutil.Git(t, work, "commit", "-q", "-m", "platform")
	testutil.Git(t, work, "update-ref", "refs/remotes/origin/main", "HEAD")
	edit("crs.yaml", "    - name: operator", "    - name: crds")
	edit("operator.yaml", "    - name: crds", "    - name: namespaces")
	t.Chdir(work)

	// runShown runs the block's fluxpack line and finds every line the
	// README shows of its output in stdout.
	runShown := func(lines, shown string, want int) {
		t.Helper()
		ran := 0
		for _, line := range strings.Split(lines, "\n") {
			line, _, _ = strings.Cut(line, "#")
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			require.Equal(t, "fluxpack", fields[0], "the tour has a line the test cannot run: %q", line)
			stdout, stderr, code := run(t, fields[1:]...)
			require.Equal(t, want, code, "%s\nstdout: %s\nstderr: %s", line, stdout, stderr)
			got := strings.Split(stdout, "\n")
			for _, l := range strings.Split(strings.TrimSpace(shown), "\n") {
				assert.Contains(t, got, l, "%s prints no such line as the README shows", line)
			}
			ran++
		}
		require.Equal(t, 1, ran, "one command in the block")
	}
	runShown(lintLines, lintShown, cli.ExitFinding)
	runShown(diffLines, diffShown, cli.ExitFinding)
}
