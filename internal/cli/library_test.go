package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/review"
)

// jsonOf is v as the CLI writes it with -o json.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	return b.String()
}

// A Go program gets the answer `fluxpack lint -o json` gives: for every
// cluster of every fixture repository (lint.Tree with no option: the
// configuration file and the bootstrap step are the library's defaults
// too) and for every stack file (lint.File).
func TestLibraryLintsAsTheCLI(t *testing.T) {
	var entries []string
	repos, err := filepath.Glob(filepath.Join("..", "..", "fluxrepo", "testdata", "repos", "*", "clusters", "*"))
	require.NoError(t, err)
	for _, e := range repos {
		if fi, err := os.Stat(e); err == nil && fi.IsDir() {
			entries = append(entries, e)
		}
	}
	require.GreaterOrEqual(t, len(entries), 15, "the fixture repositories' clusters")
	// A repository whose bootstrap script creates one cluster's namespace
	// and whose configuration declares the other's: the library must find
	// both as the CLI does.
	root := t.TempDir()
	ks := func(name, path string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {interval: 10m, path: " + path + ", prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
	}
	testutil.WriteFiles(t, root, map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		"clusters/a/apps.yaml":   ks("apps", "./apps"),
		"apps/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tunnel, namespace: network}\n",
		"scripts/bootstrap.sh":   "#!/bin/sh\nkubectl create namespace network\n",
		"clusters/b/tenant.yaml": ks("tenant", "./tenant"),
		"tenant/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: prices, namespace: billing}\n",
		".fluxpack.yaml":         "apiVersion: fluxpack.dev/v1alpha1\nkind: LintConfig\nspec:\n  existing: {namespaces: [billing]}\n",
	})
	for _, c := range []string{"a", "b"} {
		entry := filepath.Join(root, "clusters", c)
		with, err := lint.Tree(t.Context(), entry, nil)
		require.NoError(t, err)
		without, err := lint.Tree(t.Context(), entry, nil, lint.WithoutDiscovery())
		require.NoError(t, err)
		require.Less(t, with.Failing(), without.Failing(), "%s: what the repository says removes a finding", entry)
		entries = append(entries, entry)
	}
	for _, entry := range entries {
		t.Run(entry, func(t *testing.T) {
			stdout, stderr, code := run(t, "lint", entry, "-o", "json")
			require.Contains(t, []int{0, 1}, code, "stderr: %s", stderr)
			rep, err := lint.Tree(t.Context(), entry, nil)
			require.NoError(t, err)
			assert.Equal(t, jsonOf(t, rep), stdout)
		})
	}

	stacks, err := filepath.Glob(filepath.Join("..", "..", "stackfile", "testdata", "stacks", "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "platform", "stack.yaml"))
	require.NoError(t, err)
	stacks = append(stacks, more...)
	require.GreaterOrEqual(t, len(stacks), 6)
	for _, stack := range stacks {
		t.Run(stack, func(t *testing.T) {
			stdout, stderr, code := run(t, "lint", "-f", stack, "-o", "json")
			rep, err := lint.File(t.Context(), stack)
			if code == 2 {
				require.Error(t, err, "the CLI failed (%s), the library did not", stderr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, jsonOf(t, rep), stdout)
		})
	}
}

// A Go program gets the answer `fluxpack diff ENTRY --base REV -o json`
// gives (review.CompareRevision with no option), for every change of the
// review fixtures, made in the working tree of a Git repository.
func TestLibraryDiffsAsTheCLI(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "review", "testdata")
	changes, err := os.ReadDir(filepath.Join(src, "changes"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(changes), 8)
	for _, c := range changes {
		t.Run(c.Name(), func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(src, "repo"))))
			testutil.Git(t, dir, "init", "-q", "-b", "main")
			testutil.Git(t, dir, "add", "-A")
			testutil.Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
			change := filepath.Join(src, "changes", c.Name())
			require.NoError(t, filepath.WalkDir(change, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(change, p)
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
			}))
			entry := filepath.Join(dir, "clusters", "prod")
			stdout, stderr, code := run(t, "diff", entry, "--base", "HEAD", "-o", "json")
			require.Contains(t, []int{0, 1}, code, "stderr: %s", stderr)
			rep, err := review.CompareRevision(t.Context(), entry, "HEAD", nil)
			require.NoError(t, err)
			assert.Equal(t, jsonOf(t, []*review.Report{rep}), stdout)
			assert.True(t, rep.Changed(), "the change %s changes something", c.Name())
		})
	}
}
