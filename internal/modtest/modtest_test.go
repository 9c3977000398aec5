package modtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

// modInfo is one module of `go list -m -json all`.
type modInfo struct {
	Path    string
	Version string
	Main    bool
	Replace *modInfo
}

// used is the version of the module a build compiles: its replacement's
// when go.mod replaces it.
func (m modInfo) used() string {
	if m.Replace != nil {
		return m.Replace.Version
	}
	return m.Version
}

// goCmd runs the go command in dir with env added to the test's
// environment, and GOFLAGS cleared (the machine's may hold -mod=mod, which
// lets go list rewrite fluxpack's go.sum). The command runs in its own process group and is killed with
// its children (compile, link) before the test's own deadline, so a slow
// machine fails the test with the command's output instead of leaving
// builds running after go test kills the binary.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=auto", "GOFLAGS=", "GOWORK=off")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("go %s in %s: stopped at the test's deadline (%v)\n%s", strings.Join(args, " "), dir, ctx.Err(), stderr.Bytes())
	}
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, stderr.Bytes())
	return stdout.Bytes()
}

// listModules returns `go list -m -json all` of the module in dir, by path.
func listModules(t *testing.T, dir string, env ...string) map[string]modInfo {
	t.Helper()
	return decodeModules(t, goCmd(t, dir, env, "list", "-m", "-json", "all"))
}

// buildModules returns the modules that provide the packages the module
// in dir compiles (`go list -deps`): what its binaries are made of. Its
// build list (`go list -m all`) may hold other modules at lower versions,
// kept by graph pruning, that no package of the build comes from.
func buildModules(t *testing.T, dir string) map[string]modInfo {
	t.Helper()
	return decodeModules(t, goCmd(t, dir, nil, "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}} {{.Main}}{{end}}", "./..."))
}

func decodeModules(t *testing.T, out []byte) map[string]modInfo {
	t.Helper()
	mods := map[string]modInfo{}
	if len(out) > 0 && out[0] != '{' { // go list -f lines: path version main
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 {
				mods[f[0]] = modInfo{Path: f[0], Version: f[1], Main: f[2] == "true"}
			}
		}
		return mods
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m modInfo
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		mods[m.Path] = m
	}
	return mods
}

// tested is what fluxpack promises an importer gets: the engine's
// dependencies at the versions its tests and the e2e (hack/tools.sh) use.
func tested(path string) bool {
	for _, p := range []string{"sigs.k8s.io/kustomize/", "helm.sh/helm/", "github.com/fluxcd/", "k8s.io/", "sigs.k8s.io/controller-runtime"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// TestImporterGetsTestedVersions builds a throwaway module that imports
// fluxbuild and lint (with a replace for fluxpack itself only, as a
// checkout of a published version would be) and checks that every module
// its packages come from is at the version fluxpack's own go.mod selects. A
// replace in fluxpack's go.mod, which only fluxpack's own builds see, makes
// it fail: the importer then gets the replaced module's required version.
func TestImporterGetsTestedVersions(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(`module example.com/importer

go 1.27.0

toolchain go1.27.4

require github.com/fluxpack/fluxpack v0.0.0-00010101000000-000000000000

replace github.com/fluxpack/fluxpack => `+root+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(`package main

import (
	"fmt"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/lint"
)

func main() { fmt.Println(fluxbuild.Object{}, lint.Finding{}) }
`), 0o644))
	// fluxpack's go.sum has every hash the importer needs: no checksum
	// database lookup, and no module that fluxpack itself does not use.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	goCmd(t, dir, nil, "mod", "tidy")

	want := listModules(t, root)
	got := buildModules(t, dir)
	checked := 0
	for path, m := range got {
		if m.Main || path == "github.com/fluxpack/fluxpack" {
			continue
		}
		w, ok := want[path]
		if !assert.True(t, ok, "the importer resolves %s@%s, which fluxpack's build list does not have", path, m.Version) {
			continue
		}
		assert.Equal(t, w.used(), m.used(), "the importer resolves %s at another version than fluxpack's tests use", path)
		if tested(path) {
			checked++
		}
	}
	for _, path := range []string{"sigs.k8s.io/kustomize/api", "sigs.k8s.io/kustomize/kyaml", "helm.sh/helm/v4", "github.com/fluxcd/pkg/chartutil", "github.com/fluxcd/kustomize-controller/api"} {
		if assert.Contains(t, got, path, "the importer's build list") {
			assert.Equal(t, want[path].used(), got[path].used(), path)
		}
	}
	assert.Greater(t, checked, 20, "too few of the engine's modules in the importer's build list")

	// fluxpack's go.mod has no replace: an importer would not see it.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	for i, line := range strings.Split(string(gomod), "\n") {
		assert.False(t, strings.HasPrefix(strings.TrimSpace(line), "replace"),
			"go.mod:%d has a replace, which only fluxpack's own builds see: %s", i+1, line)
	}
}

// TestToolsBuildWithTheKustomizeOfGoMod holds hack/tools.sh's
// KUSTOMIZE_VERSION (the kustomize the e2e's kustomize-controller and flux
// CLI are built with) to the one go.mod selects.
func TestToolsBuildWithTheKustomizeOfGoMod(t *testing.T) {
	root := testutil.RepoRoot(t)
	script, err := os.ReadFile(filepath.Join(root, "hack", "tools.sh"))
	require.NoError(t, err)
	var tools string
	for _, line := range strings.Split(string(script), "\n") {
		if v, ok := strings.CutPrefix(line, "KUSTOMIZE_VERSION="); ok {
			tools = strings.Fields(v)[0]
		}
	}
	require.NotEmpty(t, tools, "hack/tools.sh sets no KUSTOMIZE_VERSION")
	mods := listModules(t, root)
	assert.Equal(t, mods["sigs.k8s.io/kustomize/api"].used(), tools, "hack/tools.sh builds the e2e's controllers with another kustomize/api than go.mod's")
	assert.Equal(t, mods["sigs.k8s.io/kustomize/kyaml"].used(), tools, "hack/tools.sh builds the e2e's controllers with another kustomize/kyaml than go.mod's")
}
