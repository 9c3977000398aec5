package oci

import (
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// gitInfo is what the Git checkout holding a directory says about it.
type gitInfo struct {
	source     string     // origin's URL, credentials removed
	revision   string     // <branch>@sha1:<commit>, or sha1:<commit> when detached
	commitTime *time.Time // of the revision's commit, when the checkout has it
}

// readGit asks git about dir. revision, when set, is the revision the caller
// gave: its commit's time is looked up instead of HEAD's. Anything git cannot
// answer (no git, not a checkout, no origin) is left empty.
func readGit(dir, revision string) gitInfo {
	var g gitInfo
	commit := git(dir, "rev-parse", "--verify", "-q", "HEAD")
	if commit == "" {
		return g
	}
	if u := git(dir, "config", "--get", "remote.origin.url"); u != "" {
		g.source = RedactURL(u)
	}
	if branch := git(dir, "symbolic-ref", "-q", "--short", "HEAD"); branch != "" {
		g.revision = branch + "@sha1:" + commit
	} else {
		g.revision = "sha1:" + commit
	}
	want := commit
	if revision != "" {
		want = ""
		if _, sha, ok := strings.Cut(revision, "sha1:"); ok && sha != "" {
			want = sha
		}
	}
	if want != "" {
		if s := git(dir, "show", "-s", "--format=%ct", want+"^{commit}"); s != "" {
			if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
				t := time.Unix(sec, 0).UTC()
				g.commitTime = &t
			}
		}
	}
	return g
}

// git runs git in dir and returns its trimmed output, or "" on any failure.
func git(dir string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
