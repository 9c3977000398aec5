package testutil

import (
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// GitServer serves the bare repositories under a folder over Git's smart
// HTTP protocol with git http-backend, on loopback, until the test ends.
type GitServer struct {
	// URL is the server's base: URL + "/NAME.git" clones NAME.git.
	URL   string
	packs atomic.Int32
}

// Packs is how many fetches (upload-pack requests) the server answered.
func (s *GitServer) Packs() int { return int(s.packs.Load()) }

// NewGitServer serves the bare repositories under root; the test is
// skipped where git is not installed.
func NewGitServer(t testing.TB, root string) *GitServer {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	s := &GitServer{}
	h := &cgi.Handler{
		Path:   filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			s.packs.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// BareRepo commits the folder work (made a repository, branch main, if it
// is not one) and clones it bare to root/NAME.git, for a GitServer.
func BareRepo(t testing.TB, work, root, name string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(work, ".git")); err != nil {
		Git(t, work, "init", "-q", "-b", "main")
	}
	Git(t, work, "add", "-A")
	Git(t, work, "commit", "-q", "--allow-empty", "-m", "commit")
	Git(t, root, "clone", "-q", "--bare", work, name+".git")
	return Git(t, work, "rev-parse", "HEAD")
}
