package sources_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/sources"
)

// git runs git in dir (testutil.Git).
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testutil.Git(t, dir, args...)
}

// writeWeb writes apps/web.yaml, the file every revision changes.
func writeWeb(t *testing.T, dir, content string) {
	t.Helper()
	testutil.WriteFiles(t, dir, map[string]string{"apps/web.yaml": content})
}

// platformRepo makes root/platform.git: main with three commits, tags
// v1.0.0 (lightweight), v1.1.0 (annotated), v2.0.0-rc.1, and a branch
// staging. It returns the commits by name.
func platformRepo(t *testing.T, root string) map[string]string {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	commits := map[string]string{}
	writeWeb(t, work, "kind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: \"1.0\"\n")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "one")
	git(t, work, "tag", "v1.0.0")
	commits["v1.0.0"] = git(t, work, "rev-parse", "HEAD")
	writeWeb(t, work, "kind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: \"1.1\"\n")
	require.NoError(t, os.Symlink("web.yaml", filepath.Join(work, "apps", "link.yaml")))
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "two")
	git(t, work, "tag", "-a", "v1.1.0", "-m", "release")
	commits["v1.1.0"] = git(t, work, "rev-parse", "HEAD")
	writeWeb(t, work, "kind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: \"2.0-rc\"\n")
	git(t, work, "commit", "-q", "-am", "three")
	git(t, work, "tag", "v2.0.0-rc.1")
	commits["main"] = git(t, work, "rev-parse", "HEAD")
	git(t, work, "branch", "staging", "v1.0.0")
	git(t, root, "clone", "-q", "--bare", work, "platform.git")
	return commits
}

func gitRepository(url string, ref *sourcev1.GitRepositoryRef) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: "flux-system"},
		Spec:       sourcev1.GitRepositorySpec{URL: url, Reference: ref},
	}
}

func TestGitRepository(t *testing.T) {
	root := t.TempDir()
	commits := platformRepo(t, root)
	srv := testutil.NewGitServer(t, root)
	url := srv.URL + "/platform.git"
	cache := t.TempDir()

	cases := []struct {
		name     string
		ref      *sourcev1.GitRepositoryRef
		revision string
		content  string
	}{
		{"branch", &sourcev1.GitRepositoryRef{Branch: "main"}, "main@sha1:" + commits["main"], "2.0-rc"},
		{"other branch", &sourcev1.GitRepositoryRef{Branch: "staging"}, "staging@sha1:" + commits["v1.0.0"], "1.0"},
		{"lightweight tag", &sourcev1.GitRepositoryRef{Tag: "v1.0.0"}, "v1.0.0@sha1:" + commits["v1.0.0"], "1.0"},
		{"annotated tag, peeled", &sourcev1.GitRepositoryRef{Tag: "v1.1.0"}, "v1.1.0@sha1:" + commits["v1.1.0"], "1.1"},
		{"semver range, prerelease left out", &sourcev1.GitRepositoryRef{SemVer: ">=1.0.0"}, "v1.1.0@sha1:" + commits["v1.1.0"], "1.1"},
		{"tag over semver", &sourcev1.GitRepositoryRef{SemVer: "1.0.x", Tag: "v1.1.0"}, "v1.1.0@sha1:" + commits["v1.1.0"], "1.1"},
		{"name", &sourcev1.GitRepositoryRef{Name: "refs/heads/staging"}, "refs/heads/staging@sha1:" + commits["v1.0.0"], "1.0"},
		{"commit", &sourcev1.GitRepositoryRef{Commit: commits["v1.0.0"]}, "sha1:" + commits["v1.0.0"], "1.0"},
		{"commit on a branch", &sourcev1.GitRepositoryRef{Branch: "main", Commit: commits["v1.1.0"]}, "main@sha1:" + commits["v1.1.0"], "1.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := sources.New(cache)
			require.NoError(t, err)
			a, err := f.GitRepository(t.Context(), gitRepository(url, c.ref))
			require.NoError(t, err)
			assert.Equal(t, c.revision, a.Revision)
			b, err := os.ReadFile(filepath.Join(a.Dir, "apps", "web.yaml"))
			require.NoError(t, err)
			assert.Contains(t, string(b), `v: "`+c.content+`"`)
			assert.NoDirExists(t, filepath.Join(a.Dir, ".git"))
		})
	}

	t.Run("symlink kept as a link", func(t *testing.T) {
		f, err := sources.New(cache)
		require.NoError(t, err)
		a, err := f.GitRepository(t.Context(), gitRepository(url, &sourcev1.GitRepositoryRef{Tag: "v1.1.0"}))
		require.NoError(t, err)
		target, err := os.Readlink(filepath.Join(a.Dir, "apps", "link.yaml"))
		require.NoError(t, err)
		assert.Equal(t, "web.yaml", target)
	})

	t.Run("default branch is master", func(t *testing.T) {
		f, err := sources.New(cache)
		require.NoError(t, err)
		_, err = f.GitRepository(t.Context(), gitRepository(url, nil))
		require.Error(t, err)
		assert.True(t, sources.IsNotFound(err), "%v", err)
		assert.Contains(t, err.Error(), `GitRepository/flux-system/platform`)
		assert.Contains(t, err.Error(), `refs/heads/master`)
	})

	t.Run("not found", func(t *testing.T) {
		f, err := sources.New(cache)
		require.NoError(t, err)
		for _, ref := range []*sourcev1.GitRepositoryRef{{Branch: "nope"}, {Tag: "v9"}, {SemVer: ">=3.0.0"}, {Commit: strings.Repeat("ab", 20)}} {
			_, err = f.GitRepository(t.Context(), gitRepository(url, ref))
			require.Error(t, err, "%+v", ref)
			assert.True(t, sources.IsNotFound(err), "%+v: %v", ref, err)
		}
	})

	t.Run("unreachable is not a not-found", func(t *testing.T) {
		f, err := sources.New(t.TempDir())
		require.NoError(t, err)
		_, err = f.GitRepository(t.Context(), gitRepository(srv.URL+"/missing.git", nil))
		require.Error(t, err)
		assert.False(t, sources.IsNotFound(err), "%v", err)
	})

	t.Run("cached by commit: a second run lists refs and clones nothing", func(t *testing.T) {
		dir := t.TempDir()
		f, err := sources.New(dir)
		require.NoError(t, err)
		before := srv.Packs()
		a1, err := f.GitRepository(t.Context(), gitRepository(url, &sourcev1.GitRepositoryRef{Branch: "main"}))
		require.NoError(t, err)
		require.Equal(t, before+1, srv.Packs(), "the first run clones")
		f2, err := sources.New(dir)
		require.NoError(t, err)
		a2, err := f2.GitRepository(t.Context(), gitRepository(url, &sourcev1.GitRepositoryRef{Tag: "v2.0.0-rc.1"}))
		require.NoError(t, err)
		assert.Equal(t, a1.Dir, a2.Dir, "one commit, one directory")
		assert.Equal(t, before+1, srv.Packs(), "the second run found the commit in the cache")
		entries, err := os.ReadDir(filepath.Join(dir, "git"))
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.HasPrefix(e.Name(), "."), "a staging directory was left: %s", e.Name())
		}
	})
}
