// Package action_test runs the GitHub Action's scripts (action.yml at the
// repository's root) and the GitLab CI example's (docs/gitlab) against a
// fixture repository with a local Git history, a release served on
// loopback, and fake GitHub and GitLab APIs.
package action_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/release"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// needTools skips on a machine without the tools the scripts call; the
// CI image (Debian with Go) has them all.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the action's scripts need it", tool)
		}
	}
}

// fixtureRepo is review's fixture repository committed on main (the
// pull request's base) with the change image-bump committed on a branch
// on top (the pull request's head, checked out).
func fixtureRepo(t *testing.T) (dir, baseSHA string) {
	t.Helper()
	root := testutil.RepoRoot(t)
	dir = t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(root, "review", "testdata", "repo"))))
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	require.NoError(t, err)
	wt, err := repo.Worktree()
	require.NoError(t, err)
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	h, err := wt.Commit("base", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	require.NoError(t, wt.Checkout(&git.CheckoutOptions{Branch: "refs/heads/bump", Create: true}))
	change := filepath.Join(root, "review", "testdata", "changes", "image-bump", "apps", "base", "web", "deployment.yaml")
	data, err := os.ReadFile(change)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apps", "base", "web", "deployment.yaml"), data, 0o644))
	require.NoError(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	_, err = wt.Commit("bump nginx", &git.CommitOptions{Author: sig})
	require.NoError(t, err)
	return dir, h.String()
}

// releaseServer serves a release of the fluxpack built from this
// checkout as make release lays it out: the archive and checksums.txt.
// With tamper, checksums.txt does not match the archive.
func releaseServer(t *testing.T, tamper bool) string {
	t.Helper()
	// make test-bins archives the CLI as make release does
	// (release.Archive): compressing it here, in a -race test binary, took
	// minutes on a busy machine.
	archive, err := os.ReadFile(testutil.Prebuilt(t, "flux-pack.tar.gz"))
	require.NoError(t, err)
	name := release.ArchiveName(testVersion, release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH})
	sum := sha256.Sum256(archive)
	if tamper {
		sum[0] ^= 0xff
	}
	checksums := hex.EncodeToString(sum[:]) + "  " + name + "\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/download/"+testVersion+"/"+name, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(archive) })
	mux.HandleFunc("/download/"+testVersion+"/checksums.txt", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, checksums) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/download"
}

// testVersion is the release the tests install.
const testVersion = "v0.0.0-test"

// notesAPI is a fake of the comment endpoints of GitHub (issue comments)
// and GitLab (merge-request notes): it keeps the comments it is given.
type notesAPI struct {
	mu       sync.Mutex
	comments map[int]string
	next     int
	calls    []string
}

func (a *notesAPI) handler(list, one string, update string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+list, func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.calls = append(a.calls, "GET")
		out := []map[string]any{}
		if r.URL.Query().Get("page") == "" || r.URL.Query().Get("page") == "1" {
			out = append(out, map[string]any{"id": 999, "body": "a reviewer's comment"})
			for id := 1; id <= a.next; id++ {
				if b, ok := a.comments[id]; ok {
					out = append(out, map[string]any{"id": id, "body": b})
				}
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST "+list, func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.next++
		a.comments[a.next] = in.Body
		a.calls = append(a.calls, "POST")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": a.next})
	})
	mux.HandleFunc(update+" "+one, func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		id, _ := strconv.Atoi(r.PathValue("id"))
		if _, ok := a.comments[id]; !ok {
			http.NotFound(w, r)
			return
		}
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.comments[id] = in.Body
		a.calls = append(a.calls, update+" "+strconv.Itoa(id))
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id})
	})
	return mux
}

func script(t *testing.T, dir string, env []string, name string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(testutil.RepoRoot(t), name))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGitHubAction(t *testing.T) {
	needTools(t)
	repo, baseSHA := fixtureRepo(t)
	runner := t.TempDir()
	ghPath, ghOutput := filepath.Join(runner, "path"), filepath.Join(runner, "output")
	env := []string{"RUNNER_TEMP=" + runner, "GITHUB_PATH=" + ghPath, "GITHUB_OUTPUT=" + ghOutput, "FLUXPACK_VERSION=" + testVersion}

	// A release whose checksum does not match is refused, and nothing is
	// installed.
	out, err := script(t, repo, append(env, "FLUXPACK_RELEASE_URL="+releaseServer(t, true)), "action/install.sh")
	require.Error(t, err, out)
	assert.Contains(t, out, "checksums.txt says")
	assert.NoFileExists(t, filepath.Join(runner, "fluxpack", "bin", "fluxpack"))

	out, err = script(t, repo, append(env, "FLUXPACK_RELEASE_URL="+releaseServer(t, false)), "action/install.sh")
	require.NoError(t, err, out)
	bin := filepath.Join(runner, "fluxpack", "bin")
	assert.FileExists(t, filepath.Join(bin, "fluxpack"))
	path, err := os.ReadFile(ghPath)
	require.NoError(t, err)
	assert.Equal(t, bin+"\n", string(path))

	// The diff step, as action.yml runs it: entries as a glob, the base
	// commit of the pull request.
	cache := filepath.Join(runner, "fluxpack-cache") // action.yml's, as TestActionKeepsTheCache reads it
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"), "FLUXPACK_ENTRIES=clusters/*", "FLUXPACK_BASE="+baseSHA, "FLUXPACK_CACHE_DIR="+cache)
	// The step reviews once: the annotations and the report come from one
	// run (a shim counts them).
	calls := filepath.Join(runner, "calls")
	shim := filepath.Join(runner, "fluxpack-shim")
	shimText := "#!/usr/bin/env bash\necho \"$*\" >>" + calls + "\nexec " + filepath.Join(bin, "fluxpack") + " \"$@\"\n"
	require.NoError(t, os.WriteFile(shim, []byte(shimText), 0o755))
	out, err = script(t, repo, append(slices.Clone(env), "FLUXPACK_BIN="+shim), "action/diff.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "::group::fluxpack diff clusters/prod")
	ran, err := os.ReadFile(calls)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(ran), "\n"), "fluxpack runs once: %s", ran)
	outputs, err := os.ReadFile(ghOutput)
	require.NoError(t, err)
	report := filepath.Join(runner, "fluxpack-diff.md")
	assert.Equal(t, "changed=true\nreport="+report+"\n", string(outputs))
	md, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Contains(t, string(md), "| `clusters/prod` | 0 added, 1 changed, 0 removed |")
	assert.Contains(t, string(md), "+        image: nginx:1.27.4")

	// The next run, which installs the same release again and restores the
	// cache, reads the kustomize builds the first kept: it keeps no new
	// one (install keeps the archive's time, which names the program).
	kept := cacheEntries(t, cache)
	require.NotEmpty(t, kept, "the first run keeps its builds")
	out, err = script(t, repo, append(env, "FLUXPACK_RELEASE_URL="+releaseServer(t, false)), "action/install.sh")
	require.NoError(t, err, out)
	out, err = script(t, repo, append(env, "GITHUB_OUTPUT="+filepath.Join(runner, "output2")), "action/diff.sh")
	require.NoError(t, err, out)
	assert.Equal(t, kept, cacheEntries(t, cache), "the second run takes the first run's builds")

	// Two runs of the comment step leave one comment, the latest.
	api := &notesAPI{comments: map[int]string{}}
	srv := httptest.NewServer(api.handler("/repos/acme/platform/issues/7/comments", "/repos/acme/platform/issues/comments/{id}", "PATCH"))
	t.Cleanup(srv.Close)
	cenv := append(env, "GITHUB_API_URL="+srv.URL, "GITHUB_TOKEN=t0ken", "GITHUB_REPOSITORY=acme/platform", "FLUXPACK_PR=7", "FLUXPACK_REPORT="+report)
	for range 2 {
		out, err := script(t, repo, cenv, "action/comment.sh")
		require.NoError(t, err, out)
	}
	assert.Equal(t, []string{"GET", "GET", "POST", "GET", "PATCH 1"}, api.calls, "pages read until the marker or an empty page")
	require.Len(t, api.comments, 1)
	assert.True(t, strings.HasPrefix(api.comments[1], "<!-- fluxpack-diff -->\n## fluxpack diff"), api.comments[1])
}

// cacheEntries lists the kustomize builds kept in the cache at dir (not
// the stamp of its daily pruning, which a run writes when it finds the
// cache there already).
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "kustomize"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.Name() != "pruned" {
			names = append(names, e.Name())
		}
	}
	return names
}

// action.yml restores and saves the cache where its diff step keeps it,
// before that step, keyed by the release (another release's builds are not
// its own) and the base.
func TestActionKeepsTheCache(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "action.yml"))
	require.NoError(t, err)
	var action struct {
		Runs struct {
			Steps []struct {
				Name string            `yaml:"name"`
				If   string            `yaml:"if"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &action))
	cacheStep, diffStep := -1, -1
	for i, s := range action.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/cache@") {
			cacheStep = i
		}
		if s.Name == "Diff" {
			diffStep = i
		}
	}
	require.NotEqual(t, -1, cacheStep, "a step keeps the cache")
	require.NotEqual(t, -1, diffStep)
	assert.Less(t, cacheStep, diffStep, "the cache is restored before the diff")
	c, d := action.Runs.Steps[cacheStep], action.Runs.Steps[diffStep]
	assert.Equal(t, "${{ runner.temp }}/fluxpack-cache", d.Env["FLUXPACK_CACHE_DIR"], "where TestGitHubAction keeps it")
	assert.Equal(t, d.Env["FLUXPACK_CACHE_DIR"], c.With["path"], "the cache step keeps what the diff step writes")
	assert.Contains(t, c.With["key"], "${{ inputs.version }}")
	assert.Contains(t, c.With["key"], "base.sha")
	assert.Contains(t, c.With["restore-keys"], "${{ inputs.version }}-")
	assert.Equal(t, "inputs.cache == 'true'", c.If)
}

func TestGitLabExample(t *testing.T) {
	needTools(t)
	repo, baseSHA := fixtureRepo(t)
	// The job's before_script: the release installed by action/install.sh,
	// into RUNNER_TEMP as the job's variables set it.
	tmp := t.TempDir()
	out, err := script(t, repo, []string{"RUNNER_TEMP=" + tmp, "FLUXPACK_VERSION=" + testVersion, "FLUXPACK_RELEASE_URL=" + releaseServer(t, false)}, "action/install.sh")
	require.NoError(t, err, out)
	bin := filepath.Join(tmp, "fluxpack", "bin", "fluxpack")
	api := &notesAPI{comments: map[int]string{}}
	notes := "/api/v4/projects/42/merge_requests/3/notes"
	srv := httptest.NewServer(api.handler(notes, notes+"/{id}", "PUT"))
	t.Cleanup(srv.Close)
	env := []string{"FLUXPACK_BIN=" + bin, "CI_API_V4_URL=" + srv.URL + "/api/v4", "CI_PROJECT_ID=42", "CI_MERGE_REQUEST_IID=3",
		"CI_MERGE_REQUEST_DIFF_BASE_SHA=" + baseSHA, "FLUXPACK_GITLAB_TOKEN=t0ken"}
	for range 2 {
		out, err := script(t, repo, env, "docs/gitlab/fluxpack-diff.sh")
		require.NoError(t, err, out)
	}
	assert.Equal(t, []string{"GET", "POST", "GET", "PUT 1"}, api.calls)
	require.Len(t, api.comments, 1)
	assert.Contains(t, api.comments[1], "nginx:1.27.3 -> nginx:1.27.4")
	// The job's YAML in docs calls this script.
	doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "gitlab-ci.md"))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "docs/gitlab/fluxpack-diff.sh")
	assert.Contains(t, string(doc), "ci/install.sh")
	assert.Contains(t, string(doc), "FLUXPACK_BIN: $CI_PROJECT_DIR/.fluxpack-tmp/fluxpack/bin/fluxpack")
	// It keeps the cache where fluxpack writes it.
	assert.Contains(t, string(doc), "FLUXPACK_CACHE_DIR: $CI_PROJECT_DIR/.fluxpack-cache")
	assert.Contains(t, string(doc), "paths: [.fluxpack-cache]")
}
