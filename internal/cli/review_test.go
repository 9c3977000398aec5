package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// reviewFixture lays out review's fixture repository as base, and as head
// with the change image-bump written over it.
func reviewFixture(t *testing.T) (base, head string) {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "review", "testdata")
	dir := t.TempDir()
	base, head = filepath.Join(dir, "base"), filepath.Join(dir, "head")
	require.NoError(t, os.CopyFS(base, os.DirFS(filepath.Join(src, "repo"))))
	require.NoError(t, os.CopyFS(head, os.DirFS(filepath.Join(src, "repo"))))
	// os.CopyFS refuses to overwrite: write the change file by file.
	change := filepath.Join(src, "changes", "image-bump")
	require.NoError(t, filepath.WalkDir(change, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(change, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(head, rel), data, 0o644)
	}))
	return base, head
}

func TestDiffEntry(t *testing.T) {
	base, head := reviewFixture(t)
	entry := filepath.Join(head, "clusters", "prod")
	for _, c := range []cmdCase{
		{name: "changes", args: []string{"diff", entry, "--root", head, "--base-dir", base}, code: cli.ExitFinding,
			stdout: "cluster clusters/prod: " + base + " -> " + head, inStderr: "fluxpack: clusters/prod: 1 object changed, 0 races introduced, 0 fixed"},
		{name: "exit-zero", args: []string{"diff", entry, "--root", head, "--base-dir", base, "--exit-zero", "-o", "markdown"}, code: cli.ExitOK,
			stdout: "## fluxpack diff", inStderr: "1 object changed"},
		{name: "no change", args: []string{"diff", filepath.Join(base, "clusters", "prod"), "--root", base, "--base-dir", base}, code: cli.ExitOK,
			stdout: "cluster clusters/prod", inStderr: "0 objects changed"},
		{name: "bad format", args: []string{"diff", entry, "--root", head, "--base-dir", base, "-o", "html"}, code: cli.ExitError,
			inStderr: `invalid -o/--output "html"`},
		{name: "both bases", args: []string{"diff", entry, "--root", head, "--base-dir", base, "--base", "main"}, code: cli.ExitError,
			inStderr: "give one of --base and --base-dir"},
		{name: "not git", args: []string{"diff", entry, "--root", head}, code: cli.ExitError,
			inStderr: "opening the Git repository of " + head},
		{name: "tag flags", args: []string{"diff", entry, "oci://127.0.0.1:1/x:y", "--base", "main"}, code: cli.ExitError,
			inStderr: "--base and --base-dir compare an ENTRY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, _ := c.check(t)
			assert.NotContains(t, stdout, "\x1b[", "no colour when stdout is not a terminal")
		})
	}
	// Interrupted: the command ends with 130 and leaves no base behind.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, "test", []string{"diff", entry, "--root", head, "--base-dir", base}, &stdout, &stderr)
	assert.Equal(t, cli.ExitInterrupted, code, stderr.String())
}

// TestDiffSummarySaysWhatRacesWereNotChecked: "0 races introduced" is
// followed by the layers lint could not check (a chart not available
// offline), and the report says why.
func TestDiffSummarySaysWhatRacesWereNotChecked(t *testing.T) {
	tree := func(tag string) map[string]string {
		return map[string]string{
			"clusters/main/sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  ref:
    branch: main
  url: https://git.example.com/home.git
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
  namespace: flux-system
spec:
  interval: 1h
  url: https://charts.example.com
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
			"apps/release.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: apps
spec:
  interval: 1h
  chart:
    spec:
      chart: app
      version: 1.0.0
      sourceRef:
        kind: HelmRepository
        name: charts
        namespace: flux-system
  values:
    image:
      repository: ghcr.io/example/app
      tag: ` + tag + `
`,
		}
	}
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	testutil.WriteFiles(t, base, tree("1.0.0"))
	testutil.WriteFiles(t, head, tree("1.1.0"))
	stdout, _ := cmdCase{args: []string{"diff", filepath.Join(head, "clusters", "main"), "--root", head, "--base-dir", base}, code: cli.ExitFinding,
		stdout: "cluster clusters/main", inStderr: "fluxpack: clusters/main: 1 object changed, 0 races introduced, 0 fixed; races not checked in 1 of 2 layers"}.check(t)
	assert.Contains(t, stdout, "races checked in 1 of 2 layers; 1 not checked (a race there is not reported)\n  1 layer with or after a chart not rendered (HelmRelease/apps/app: ")
	assert.Contains(t, stdout, "~ ghcr.io/example/app:1.0.0 -> ghcr.io/example/app:1.1.0 (HelmRelease.helm.toolkit.fluxcd.io/apps/app; from values, chart not rendered)")
}

// TestDiffEntryAgainstGitBase: with a Git history, diff ENTRY compares the
// working tree with the merge-base of its upstream by default, and with
// --base REV when given, and leaves no extracted tree in TMPDIR.
func TestDiffEntryAgainstGitBase(t *testing.T) {
	base, head := reviewFixture(t)
	repo, err := git.PlainInit(base, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	_, err = wt.Commit("base", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	// The working tree now holds the change, uncommitted.
	data, err := os.ReadFile(filepath.Join(head, "apps", "base", "web", "deployment.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(base, "apps", "base", "web", "deployment.yaml"), data, 0o644))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stdout, stderr, code := run(t, "diff", filepath.Join(base, "clusters", "prod"), "--base", "HEAD", "-o", "unified")
	require.Equal(t, cli.ExitFinding, code, stderr)
	assert.Contains(t, stdout, "-        image: nginx:1.27.3\n+        image: nginx:1.27.4\n")
	_, stderr, code = run(t, "diff", filepath.Join(base, "clusters", "prod"))
	require.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "has no upstream branch")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.Empty(t, strings.Join(names, " "), "diff left files in TMPDIR")
}

func TestDiffStackAndFleet(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "fleet", "testdata", "fleet")
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	require.NoError(t, os.CopyFS(base, os.DirFS(src)))
	require.NoError(t, os.CopyFS(head, os.DirFS(src)))
	fleet, err := os.ReadFile(filepath.Join(head, "fleet.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(head, "fleet.yaml"), bytes.Replace(fleet, []byte("timeout: 2m"), []byte("timeout: 1m"), 1), 0o644))
	for _, c := range []cmdCase{
		{name: "fleet", args: []string{"diff", "--fleet", filepath.Join(head, "fleet.yaml"), "--root", head, "--base-dir", base}, code: cli.ExitFinding,
			stdout: "cluster fleet.yaml#staging", inStderr: "1 of 2 clusters changed: 1 object"},
		{name: "stack unchanged", args: []string{"diff", "-f", filepath.Join(head, "stack.yaml"), "--root", head, "--base-dir", base}, code: cli.ExitOK,
			stdout: "cluster stack.yaml", inStderr: "stack.yaml: 0 objects changed"},
		{name: "stack and entry", args: []string{"diff", "-f", filepath.Join(head, "stack.yaml"), head, "--base-dir", base}, code: cli.ExitError,
			inStderr: "give one of ENTRY..., -f STACK and --fleet FLEET"},
		{name: "nothing", args: []string{"diff"}, code: cli.ExitError, inStderr: "give ENTRY..., -f STACK"},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

// TestDiffTagObjects: diff DIR oci://…:TAG says, below the files, what
// changes object by object, and never a Secret's value.
func TestDiffTagObjects(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"apps/web.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - {name: web, image: \"nginx:1.27.3\"}\n",
		"apps/config.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: apps}\ndata: {mode: blue}\n",
		"kustomization.yaml": "resources: [apps/web.yaml, apps/config.yaml]\n",
	})
	url := "oci://" + reg.Host + "/platform:v1"
	_, stderr, code := run(t, "push", dir, url, "--source", "https://example.com/p.git", "--revision", "main@sha1:"+strings.Repeat("1", 40))
	require.Equal(t, cli.ExitOK, code, stderr)
	testutil.WriteFiles(t, dir, map[string]string{
		"apps/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - {name: web, image: \"nginx:1.27.4\"}\n",
		"apps/new.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: apps}\n",
	})
	stdout, stderr, code := run(t, "diff", dir, url)
	require.Equal(t, cli.ExitFinding, code, stderr)
	assert.Contains(t, stdout, "+ apps/new.yaml\n~ apps/web.yaml\nobjects: 1 added, 1 changed, 0 removed\n")
	assert.Contains(t, stdout, "+ ServiceAccount/apps/web  (apps/new.yaml)\n")
	assert.Contains(t, stdout, "    spec.replicas: 1 -> 2\n")
	assert.Contains(t, stdout, "    spec.template.spec.containers[name=web].image: nginx:1.27.3 -> nginx:1.27.4\n")
	assert.NotContains(t, stdout, "ConfigMap", "an unchanged file's objects are not compared")
	js, _, code := run(t, "diff", dir, url, "-o", "json")
	require.Equal(t, cli.ExitFinding, code)
	assert.Contains(t, js, `"objects": [`)
}

// promote refuses to hand one fleet cluster's tag another cluster's
// render, naming --other-cluster, which allows it.
func TestPromoteOtherCluster(t *testing.T) {
	reg := testutil.NewRegistry(t)
	for _, cluster := range []string{"staging", "prod"} {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"vars.yaml": "cluster: " + cluster + "\n"})
		_, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:"+cluster, oci.WithAnnotations(map[string]string{oci.ClusterAnnotation: cluster}))
		require.NoError(t, err)
	}
	_, stderr, code := run(t, "promote", "oci://"+reg.Host+"/platform:prod", "--from", "staging")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, `cluster "staging"'s render`)
	assert.Contains(t, stderr, "--other-cluster")
	assert.NotContains(t, stderr, "WithOtherCluster")
	_, stderr, code = run(t, "promote", "oci://"+reg.Host+"/platform:prod", "--from", "staging", "--other-cluster")
	assert.Equal(t, cli.ExitOK, code, stderr)
}

// gitStackFixture commits layering's fleet fixture as a Git repository
// under dir/repo, the way the README lays a platform out: the stack's IaC
// outputs outside the repository (../terraform/default.json), the
// fleet's in a folder Git ignores (terraform/), and the render in an
// ignored out/. broken.yaml names an outputs file the commit lacks.
func gitStackFixture(t *testing.T) (repoDir string) {
	t.Helper()
	src := filepath.Join(testutil.RepoRoot(t), "fleet", "testdata", "fleet")
	dir := t.TempDir()
	repoDir = filepath.Join(dir, "repo")
	require.NoError(t, os.CopyFS(repoDir, os.DirFS(src)))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "terraform"), os.DirFS(filepath.Join(src, "terraform"))))
	stack, err := os.ReadFile(filepath.Join(repoDir, "stack.yaml"))
	require.NoError(t, err)
	outside := bytes.Replace(stack, []byte("outputs: terraform/default.json"), []byte("outputs: ../terraform/default.json"), 1)
	require.NotEqual(t, stack, outside, "the fixture's stack changed: no outputs to move")
	broken := bytes.Replace(stack, []byte("outputs: terraform/default.json"), []byte("outputs: vars/cluster.json"), 1)
	testutil.WriteFiles(t, repoDir, map[string]string{
		"stack.yaml":  string(outside),
		"broken.yaml": string(broken),
		".gitignore":  "out/\nterraform/\n",
	})
	repo, err := git.PlainInit(repoDir, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	_, err = wt.Commit("platform", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}})
	require.NoError(t, err)
	st, err := wt.Status()
	require.NoError(t, err)
	require.True(t, st.IsClean(), "the checkout is clean: %v", st)
	_, err = os.Stat(filepath.Join(repoDir, "terraform", "staging.json"))
	require.NoError(t, err, "the fleet's outputs are in the working tree, ignored")
	// The render, where the README's tour writes it: ignored files.
	_, stderr, code := run(t, "render", "-f", filepath.Join(repoDir, "stack.yaml"), "-d", filepath.Join(repoDir, "out"))
	require.Equal(t, cli.ExitOK, code, stderr)
	return repoDir
}

// TestDiffStackGitBase: diff -f STACK --base HEAD on a clean checkout
// is no change. Ignored files (the render in out/, the fleet's outputs)
// are no changed files, and the outputs files that are not in the
// repository are read from the working tree on both sides, said once.
func TestDiffStackGitBase(t *testing.T) {
	repoDir := gitStackFixture(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull) // no excludes of the machine's
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, c := range []struct {
		name, outputs string
		args          []string
	}{
		{"stack", "../terraform/default.json", []string{"-f", filepath.Join(repoDir, "stack.yaml")}},
		{"fleet", "terraform/staging.json", []string{"--fleet", filepath.Join(repoDir, "fleet.yaml")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, append([]string{"diff", "--base", "HEAD"}, c.args...)...)
			require.Equal(t, cli.ExitOK, code, "a clean checkout is no change:\n%s%s", stdout, stderr)
			assert.Contains(t, stdout, "0 files changed;")
			assert.Contains(t, stdout, "outputs read from "+c.outputs+" on both sides")
			assert.Contains(t, stdout, "no change to objects, races or bootstrap order")
			assert.Equal(t, 1, strings.Count(stdout, "outputs read from "+c.outputs), "said once per cluster:\n%s", stdout)
			md, _, code := run(t, append([]string{"diff", "--base", "HEAD", "-o", "markdown"}, c.args...)...)
			require.Equal(t, cli.ExitOK, code)
			assert.Contains(t, md, "Outputs read from "+c.outputs+" on both sides")
		})
	}
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "diff left files in TMPDIR")
}

// TestDiffStackBaseMessages: a finding of the base side (here the
// outputs file the commit lacks, which the working tree adds) names the
// file as the repository does, never the temporary folder the base was
// written to: every format prints the same on every run.
func TestDiffStackBaseMessages(t *testing.T) {
	repoDir := gitStackFixture(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	data, err := os.ReadFile(filepath.Join(repoDir, "..", "terraform", "default.json"))
	require.NoError(t, err)
	testutil.WriteFiles(t, repoDir, map[string]string{"vars/cluster.json": string(data)})
	for _, out := range []string{"", "markdown", "json", "github", "sarif", "unified"} {
		t.Run("format "+out, func(t *testing.T) {
			var runs []string
			for range 2 {
				stdout, stderr, code := run(t, "diff", "-f", filepath.Join(repoDir, "broken.yaml"), "--base", "HEAD", "-o", out)
				require.Equal(t, cli.ExitFinding, code, stderr)
				assert.NotContains(t, stdout, tmp, "stdout names the base's temporary folder")
				assert.NotContains(t, stderr, tmp, "stderr names the base's temporary folder")
				runs = append(runs, stdout+stderr)
			}
			assert.Equal(t, runs[0], runs[1], "two runs print the same")
			if out == "" || out == "markdown" || out == "json" {
				assert.Contains(t, runs[0], "open vars/cluster.json: no such file or directory", "the fixed finding names the file in the repository")
			}
		})
	}
}

// TestDiffEntryIgnoredFiles: diff ENTRY --base HEAD on a clean checkout
// with ignored files (a render, a secret) lists no changed file.
func TestDiffEntryIgnoredFiles(t *testing.T) {
	base, _ := reviewFixture(t)
	testutil.WriteFiles(t, base, map[string]string{".gitignore": "out/\n*.secret.yaml\n"})
	repo, err := git.PlainInit(base, false)
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	_, err = wt.Commit("base", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}})
	require.NoError(t, err)
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	testutil.WriteFiles(t, base, map[string]string{
		"out/clusters/prod/all.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rendered}\n",
		"vars.secret.yaml":           "password: s3cr3t\n",
	})
	stdout, stderr, code := run(t, "diff", filepath.Join(base, "clusters", "prod"), "--base", "HEAD")
	require.Equal(t, cli.ExitOK, code, stderr)
	assert.Contains(t, stdout, "0 files changed;")
}

// --report FORMAT=FILE writes, from the same review, what -o FORMAT would
// print: a CI job that annotates and comments reviews once. A bad spec is
// refused before anything is read, and a file that cannot be written is
// an error naming it.
func TestDiffReportFiles(t *testing.T) {
	base, head := reviewFixture(t)
	entry := filepath.Join(head, "clusters", "prod")
	args := []string{"diff", entry, "--root", head, "--base-dir", base}
	diff := func(extra ...string) (int, string, string) {
		stdout, stderr, code := run(t, append(slices.Clone(args), extra...)...)
		return code, stdout, stderr
	}
	want := map[string]string{}
	for _, format := range []string{"", "markdown", "github", "sarif", "unified", "json"} {
		code, stdout, stderr := diff("-o", format)
		require.Equal(t, cli.ExitFinding, code, stderr)
		want[format] = stdout
	}
	dir := t.TempDir()
	md, sarif, text := filepath.Join(dir, "report.md"), filepath.Join(dir, "report.sarif"), filepath.Join(dir, "report.txt")
	code, stdout, stderr := diff("-o", "github", "--report", "markdown="+md, "--report", "sarif="+sarif, "--report", "text="+text)
	require.Equal(t, cli.ExitFinding, code, "the exit code is the review's: %s", stderr)
	assert.Equal(t, want["github"], stdout)
	for file, format := range map[string]string{md: "markdown", sarif: "sarif", text: ""} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, want[format], string(data), "--report %q", format)
	}
	assert.Contains(t, want["markdown"], "## fluxpack diff")

	for _, c := range []struct{ spec, why string }{
		{"markdown", "want FORMAT=FILE"},
		{"markdown=", "want FORMAT=FILE"},
		{"html=x.html", `the format "html" is not one of`},
	} {
		code, _, stderr := diff("--report", c.spec)
		assert.Equal(t, cli.ExitError, code, c.spec)
		assert.Contains(t, stderr, c.why, c.spec)
	}
	code, _, stderr = diff("--report", "json="+md, "--report", "markdown="+md)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "is named by another --report too")

	unwritable := filepath.Join(md, "report.md") // below a file
	code, _, stderr = diff("--report", "markdown="+unwritable)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--report markdown="+unwritable)
	assert.NoFileExists(t, unwritable)

	code, _, stderr = diff("-o", "json", "--report", "markdown="+md, "--exit-zero")
	assert.Equal(t, cli.ExitOK, code, stderr)
	_, stderr, code = run(t, "diff", entry, "oci://127.0.0.1:1/x:y", "--report", "markdown="+md)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, stderr, "--report writes the report of diff ENTRY")
}
