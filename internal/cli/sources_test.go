package cli_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// TestLintSourcesOnline lints package fluxrepo's helm-operators repository
// (the naive cluster: the stores race the operator's webhook) laid out as
// platform teams publish it: the cluster folder in one repository, the
// infrastructure in another (a GitRepository served over HTTP), the
// operator's chart in an HTTP Helm repository at a version range. Offline
// lint can only say what it could not check; --sources online fetches
// both, as source-controller would, and finds the race.
func TestLintSourcesOnline(t *testing.T) {
	chart, digest := testutil.PackagedTestChart(t)
	helmURL := testutil.ServeHelmRepo(t, testutil.HelmIndex(digest, "0.3.1", "0.3.2"), chart).URL
	files := testutil.ReadFiles(t, filepath.Join(testutil.RepoRoot(t), "fluxrepo", "testdata", "repos", "helm-operators"))
	platform, cluster := map[string]string{}, map[string]string{}
	for f, b := range files {
		switch {
		case strings.HasPrefix(f, "infrastructure/"):
			platform[f] = b
		case strings.HasPrefix(f, "clusters/naive/"):
			cluster[f] = b
		}
	}
	release := strings.Replace(platform["infrastructure/operator/release.yaml"], `      chart: ./charts/secrets-operator
      sourceRef:
        kind: GitRepository
        name: flux-system
`, `      chart: secrets-operator
      version: "0.3.x"
      sourceRef:
        kind: HelmRepository
        name: charts
`, 1)
	require.Contains(t, release, "HelmRepository")
	platform["infrastructure/operator/release.yaml"] = release
	platform["infrastructure/operator/repository.yaml"] = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {interval: 1h, url: "` + helmURL + `"}
`
	platform["infrastructure/operator/kustomization.yaml"] = "resources: [release.yaml, values.yaml, repository.yaml]\n"
	gitRoot := t.TempDir()
	work := t.TempDir()
	testutil.WriteFiles(t, work, platform)
	testutil.BareRepo(t, work, gitRoot, "platform")
	git := testutil.NewGitServer(t, gitRoot)

	ks := strings.ReplaceAll(cluster["clusters/naive/infrastructure.yaml"], "sourceRef: {kind: GitRepository, name: flux-system}", "sourceRef: {kind: GitRepository, name: platform}")
	require.Equal(t, 4, strings.Count(ks, "name: platform}"))
	cluster["clusters/naive/infrastructure.yaml"] = ks
	source := func(ref string) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: platform, namespace: flux-system}
spec:
  interval: 10m
  url: ` + git.URL + `/platform.git
  ref: {` + ref + `}
`
	}
	root := t.TempDir()
	cluster["clusters/naive/platform.yaml"] = source("branch: main")
	testutil.WriteFiles(t, root, cluster)
	entry := filepath.Join(root, "clusters", "naive")

	stdout, stderr, code := run(t, "lint", entry, "--root", root)
	assert.Equal(t, 0, code, "lint offline; stdout %s, stderr %s", stdout, stderr)
	assert.Contains(t, stderr, "--sources online", "the coverage says how to check the rest")
	assert.NotContains(t, stdout, "[webhook-order]")

	stdout, stderr, code = run(t, "lint", entry, "--root", root, "--sources", "online")
	require.Equal(t, cli.ExitFinding, code, "lint --sources online; stdout %s, stderr %s", stdout, stderr)
	assert.Contains(t, stdout, "[webhook-order]")
	assert.Contains(t, stdout, `operator layer "operator" serves the admission webhook of external-secrets.io`)
	assert.NotContains(t, stdout, "not available offline", "every source was fetched")
	packs := git.Packs()

	t.Run("cached", func(t *testing.T) {
		stdout2, stderr, code := run(t, "lint", entry, "--root", root, "--sources", "online")
		require.Equal(t, cli.ExitFinding, code, "stderr %s", stderr)
		assert.Equal(t, stdout, stdout2)
		assert.Equal(t, packs, git.Packs(), "the commit came from the cache")
	})

	t.Run("a ref the repository lacks is a finding", func(t *testing.T) {
		testutil.WriteFiles(t, root, map[string]string{"clusters/naive/platform.yaml": source("tag: v9.9.9")})
		t.Cleanup(func() {
			testutil.WriteFiles(t, root, map[string]string{"clusters/naive/platform.yaml": source("branch: main")})
		})
		stdout, stderr, code := run(t, "lint", entry, "--root", root, "--sources", "online")
		require.Equal(t, cli.ExitFinding, code, "stdout %s, stderr %s", stdout, stderr)
		assert.Contains(t, stdout, `couldn't find remote ref "refs/tags/v9.9.9"`)
		assert.Contains(t, stdout, "[source]")
	})

	t.Run("a range no chart version matches is a finding", func(t *testing.T) {
		b := strings.Replace(release, `version: "0.3.x"`, `version: ">=9.0.0"`, 1)
		w := t.TempDir()
		p := map[string]string{}
		for k, v := range platform {
			p[k] = v
		}
		p["infrastructure/operator/release.yaml"] = b
		testutil.WriteFiles(t, w, p)
		testutil.BareRepo(t, w, gitRoot, "platform-next")
		testutil.WriteFiles(t, root, map[string]string{"clusters/naive/platform.yaml": strings.Replace(source("branch: main"), "/platform.git", "/platform-next.git", 1)})
		t.Cleanup(func() {
			testutil.WriteFiles(t, root, map[string]string{"clusters/naive/platform.yaml": source("branch: main")})
		})
		stdout, stderr, code := run(t, "lint", entry, "--root", root, "--sources", "online")
		require.Equal(t, cli.ExitFinding, code, "stdout %s, stderr %s", stdout, stderr)
		assert.Contains(t, stdout, "no 'secrets-operator' chart with version matching '>=9.0.0' found")
		assert.Contains(t, stdout, "[chart]")
	})

	t.Run("a bad value", func(t *testing.T) {
		_, stderr, code := run(t, "lint", entry, "--root", root, "--sources", "sometimes")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, `--sources "sometimes": want offline or online`)
	})
}

// TestLintSaysWhyASourceWasNotFetched: with --sources online, a source
// that cannot be fetched (a Git server that refuses the connection) is
// said once in the text output, with why and the layers it leaves
// unchecked; stderr stays the summary line.
func TestLintSaysWhyASourceWasNotFetched(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	ks := func(name, path string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: " + path +
			"\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: addons\n"
	}
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"clusters/prod/source.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: addons\n  namespace: flux-system\nspec:\n  interval: 1h\n  url: http://" + closed + "/addons.git\n  ref:\n    branch: main\n",
		"clusters/prod/addons.yaml": ks("addons", "./addons") + "---\n" + ks("addons-extra", "./extra"),
	})
	entry := filepath.Join(root, "clusters", "prod")
	stdout, stderr, code := run(t, "lint", entry, "--root", root, "--sources", "online")
	require.Equal(t, cli.ExitOK, code, "stdout %s, stderr %s", stdout, stderr)
	want := `not checked (source): GitRepository/flux-system/addons could not be fetched: fetching GitRepository/flux-system/addons (http://` + closed + `/addons.git): `
	assert.Equal(t, 1, strings.Count(stdout, want), "stdout says why once:\n%s", stdout)
	assert.Contains(t, stdout, `connection refused (layers "addons", "addons-extra")`, "stdout names the layers")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "stderr is the summary line: %s", stderr)
	assert.Contains(t, stderr, "they could not be fetched (each says why)")

	stdout, _, code = run(t, "lint", entry, "--root", root)
	require.Equal(t, cli.ExitOK, code)
	assert.Equal(t, `not checked (source): GitRepository/flux-system/addons is another source than the repository: not available offline (fetch it with --sources online, or map it to a directory with --source GitRepository/flux-system/addons=DIR) (layers "addons", "addons-extra")`+"\n", stdout, "offline, what lint did not read")
}
