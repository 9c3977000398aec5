package review

import (
	"encoding/hex"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The git command, when it is on PATH, answers the two questions every
// changed-only review asks of Git (what a revision is, which files
// changed since it) from its index and memory-mapped pack indexes in a
// few milliseconds. go-git first decodes each pack's whole index (about
// 30 ms for a home-ops repository's 130,000 objects) and hashes every
// file of the working tree (up to 100 ms more).
//
// Every answer falls back to go-git's when the command is missing or
// fails: no git in a distroless image, git refusing a checkout owned by
// another user (safe.directory) in a CI container, a revision spelling
// only go-git reads. Tests hold both to the same answers.

// gitCLIOff turns the command off, for tests that hold go-git's answers
// to the command's.
var gitCLIOff atomic.Bool

var gitPath = sync.OnceValue(func() string {
	p, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	return p
})

// gitEnv is the environment the command runs in: the caller's, without
// what would point git at another repository, index or object store than
// the folder's own (go-git reads none of those either; a hook's GIT_DIR
// would), and without taking the index lock to refresh it.
var gitEnv = sync.OnceValue(func() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
			"GIT_OPTIONAL_LOCKS", "LC_ALL":
			return true
		}
		return false
	})
	return append(env, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
})

// gitOutput runs git in dir and returns what it printed; ok is false when
// there is no git command or it failed.
func gitOutput(dir string, args ...string) (out []byte, ok bool) {
	if gitCLIOff.Load() || gitPath() == "" {
		return nil, false
	}
	cmd := exec.Command(gitPath(), append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	return out, err == nil
}

// gitResolve returns the commit rev names and its tree, in the
// repository holding dir, from one git rev-parse.
func gitResolve(dir, rev string) (commit, tree string, ok bool) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", "", false // not a revision git reads without an option
	}
	out, ok := gitOutput(dir, "rev-parse", rev+"^{commit}", rev+"^{tree}", "--")
	if !ok {
		return "", "", false
	}
	lines := strings.Fields(string(out))
	if len(lines) != 3 || lines[2] != "--" || !isHash(lines[0]) || !isHash(lines[1]) {
		return "", "", false
	}
	treeOf.Store(lines[0], lines[1])
	return lines[0], lines[1], true
}

// treeOf remembers each commit's tree gitResolve read: a kept base is
// then found without asking again.
var treeOf sync.Map // commit → tree

// gitTree returns the tree of commit.
func gitTree(dir, commit string) (string, bool) {
	if t, ok := treeOf.Load(commit); ok {
		return t.(string), true
	}
	_, t, ok := gitResolve(dir, commit)
	return t, ok
}

func isHash(h string) bool {
	_, err := hex.DecodeString(h)
	return err == nil && (len(h) == 40 || len(h) == 64)
}

// gitChangedSince is changedSinceIn's answer from the git command: the
// files below head whose content, link or executable bit differs from
// commit's, or that only one of them has (the tracked ones from git diff,
// the untracked ones git does not ignore from git ls-files), relative to
// head and sorted. ok is false where it cannot tell: a file untracked in
// the working tree that commit has (git diff calls it deleted).
func gitChangedSince(head, commit string) (files []string, ok bool) { // nil when none, as changedPaths
	// Both at once: each reads the index and stats the working tree.
	var diff, others []byte
	var okD, okO bool
	var wg sync.WaitGroup
	wg.Go(func() {
		others, okO = gitOutput(head, "ls-files", "--others", "--exclude-standard", "-z")
	})
	diff, okD = gitOutput(head, "diff", "--name-only", "-z", "--no-renames", "--relative",
		"--ignore-submodules=all", "--no-ext-diff", "--no-textconv", commit, "--")
	wg.Wait()
	if !okD || !okO {
		return nil, false
	}
	seen := map[string]bool{}
	for p := range strings.SplitSeq(string(diff), "\x00") {
		if p != "" {
			seen[p] = true
		}
	}
	for p := range strings.SplitSeq(string(others), "\x00") {
		switch {
		case p == "", strings.HasSuffix(p, "/"): // another repository: its files are not listed
		case seen[p]:
			return nil, false
		default:
			seen[p] = true
		}
	}
	for p := range seen {
		files = append(files, p)
	}
	slices.Sort(files)
	return files, true
}
