//go:build moduletest

package modtest_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

const modPath = "github.com/fluxpack/fluxpack"

// git runs git in the checkout and returns its trimmed output.
func git(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "git %s", strings.Join(args, " "))
	return strings.TrimSpace(string(out))
}

// moduleProxy writes a GOPROXY=file:// directory that serves the commit
// HEAD of the checkout as fluxpack at a pseudo-version of that commit, as
// the module proxy would serve a published version: the zip is made from
// the commit's files (git archive), not from the working tree.
func moduleProxy(t *testing.T, root string) (dir, version string) {
	t.Helper()
	rev := git(t, root, "rev-parse", "HEAD")
	unix := git(t, root, "show", "-s", "--format=%ct", "HEAD")
	var sec int64
	_, err := fmt.Sscan(unix, &sec)
	require.NoError(t, err)
	when := time.Unix(sec, 0).UTC()
	version = "v0.0.0-" + when.Format("20060102150405") + "-" + rev[:12]

	dir = t.TempDir()
	at := filepath.Join(dir, modPath, "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))
	var z bytes.Buffer
	require.NoError(t, modzip.CreateFromVCS(&z, module.Version{Path: modPath, Version: version}, root, rev, ""))
	info, err := json.Marshal(map[string]any{"Version": version, "Time": when})
	require.NoError(t, err)
	files := map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  []byte(git(t, root, "show", rev+":go.mod") + "\n"),
		version + ".zip":  z.Bytes(),
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(at, name), data, 0o644))
	}
	_, err = zip.NewReader(bytes.NewReader(z.Bytes()), int64(z.Len()))
	require.NoError(t, err)
	return dir, version
}

// TestGoInstallAtVersion runs `go install
// github.com/fluxpack/fluxpack/cmd/fluxpack@VERSION` against a module proxy
// directory that serves this checkout's HEAD, as a user without a checkout
// installs a release, and checks the binary reports that version. The go
// command refuses a module whose go.mod has replace directives here, so
// this fails the day one comes back.
//
// It compiles the CLI, so it has a build tag and make test runs it on its
// own with its own timeout. It builds with -race to reuse what make test
// compiled before it (the dependencies come from the same module cache
// directories with the same flags); fluxpack's own packages compile again
// from the module cache's copy.
func TestGoInstallAtVersion(t *testing.T) {
	root := testutil.RepoRoot(t)
	proxy, version := moduleProxy(t, root)
	gomodcache := strings.TrimSpace(string(goCmd(t, root, nil, "env", "GOMODCACHE")))
	t.Cleanup(func() { removeFromModCache(t, gomodcache, version) })
	upstream := strings.TrimSpace(string(goCmd(t, root, nil, "env", "GOPROXY")))
	bin := t.TempDir()
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + "," + upstream,
		"GONOSUMDB=" + modPath, "GONOSUMCHECK=" + modPath, "GOBIN=" + bin,
	}
	goCmd(t, t.TempDir(), env, "install", "-race", modPath+"/cmd/fluxpack@"+version)

	out, err := exec.CommandContext(t.Context(), filepath.Join(bin, "fluxpack"), "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, version, strings.TrimSpace(string(out)), "fluxpack version of a binary go install built at a version")
}

// removeFromModCache deletes what go install extracted of the test's
// version (module files are read-only there).
func removeFromModCache(t *testing.T, gomodcache, version string) {
	for _, p := range []string{
		filepath.Join(gomodcache, modPath+"@"+version),
	} {
		_ = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o755)
			}
			return nil
		})
		assert.NoError(t, os.RemoveAll(p))
	}
	matches, _ := filepath.Glob(filepath.Join(gomodcache, "cache", "download", modPath, "@v", version+".*"))
	for _, m := range matches {
		assert.NoError(t, os.Remove(m))
	}
}
