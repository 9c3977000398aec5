package review

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// gitRules are the files Git ignores in the working tree holding a
// folder: the untracked ones that match core.excludesFile (from the
// system, global and repository configuration, by default
// $XDG_CONFIG_HOME/git/ignore), .git/info/exclude and the .gitignore
// files, the deeper over the higher, as git status decides. A tracked
// file is never ignored, and a folder holding another repository (a
// submodule, a nested clone) is left out, as Git leaves it out.
//
// Patterns are matched by go-git's gitignore package, with its limits;
// [include] and [includeIf] sections of configuration files are not
// followed.
type gitRules struct {
	root string
	// prefix is root's path from the working tree's top.
	prefix []string
	// patterns are those in force at root: the excludes files, then the
	// .gitignore files of the folders above root, top first.
	patterns []gitignore.Pattern
	// tracked holds the index's paths and their folders, from the top.
	tracked map[string]bool
}

// loadGitRules returns the rules of the Git working tree holding root,
// or nil when root is in none, or in one that tracks nothing under it (a
// revision written out into a temporary folder inside a checkout): then
// nothing is ignored.
func loadGitRules(root string) (*gitRules, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	repo, err := openRepo(abs)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	wt, err := repo.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the Git working tree of %s: %w", root, err)
	}
	top := wt.Filesystem.Root()
	rel, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, nil
	}
	r := &gitRules{root: abs, tracked: map[string]bool{}}
	if rel != "." {
		r.prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	idx, err := repo.Storer.Index()
	if err != nil {
		return nil, fmt.Errorf("reading the Git index of %s: %w", top, err)
	}
	for _, e := range idx.Entries {
		for p := e.Name; p != "." && !r.tracked[p]; p = path.Dir(p) {
			r.tracked[p] = true
		}
	}
	if len(r.prefix) > 0 && !r.tracked[strings.Join(r.prefix, "/")] {
		return nil, nil
	}
	common := commonDir(top)
	if f := excludesFile(filepath.Join(common, "config")); f != "" {
		r.patterns = readPatterns(f, nil)
	}
	r.patterns = append(r.patterns, readPatterns(filepath.Join(common, "info", "exclude"), nil)...)
	dir := top
	for i, name := range r.prefix {
		r.patterns = append(r.patterns, readPatterns(filepath.Join(dir, ".gitignore"), r.prefix[:i])...)
		dir = filepath.Join(dir, name)
	}
	return r, nil
}

// commonDir is the folder holding the repository's configuration and
// info/exclude: top/.git, or for a linked worktree (a .git file naming
// its gitdir) the gitdir's commondir.
func commonDir(top string) string {
	dotgit := filepath.Join(top, ".git")
	data, err := os.ReadFile(dotgit)
	if err != nil { // a folder, as usual
		return dotgit
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return dotgit
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(top, gitdir)
	}
	common, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return gitdir
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitdir, c)
	}
	return c
}

// excludesFile is core.excludesFile as git reads it: the last value set
// in the system, global and repository (repoConfig) configuration, else
// $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore).
func excludesFile(repoConfig string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, cmp.Or(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	switch g := os.Getenv("GIT_CONFIG_GLOBAL"); {
	case g != "":
		files = append(files, g)
	default:
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, repoConfig)
	out := ""
	if xdg != "" {
		out = filepath.Join(xdg, "git", "ignore")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		cfg := gitconfig.New()
		if gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg) != nil {
			continue
		}
		for _, s := range cfg.Sections {
			if !s.IsName("core") {
				continue
			}
			for _, o := range s.Options {
				if o.IsKey("excludesFile") {
					out = o.Value
				}
			}
		}
	}
	if rest, ok := strings.CutPrefix(out, "~/"); ok && home != "" {
		out = filepath.Join(home, rest)
	}
	return out
}

// readPatterns reads an ignore file whose patterns apply below domain
// (the folder's path from the top); a file that cannot be read has none.
func readPatterns(file string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// folder returns the rules in force in the folder at comps (its path
// from the top) given those of its parent: the parent's, then the
// folder's own .gitignore, when hasIgnore says it has one.
func folder(parent []gitignore.Pattern, dir string, comps []string, hasIgnore bool) []gitignore.Pattern {
	if !hasIgnore {
		return parent
	}
	own := readPatterns(filepath.Join(dir, ".gitignore"), comps)
	if len(own) == 0 {
		return parent
	}
	return append(slices.Clip(parent), own...)
}

// match says what Git does with the path p (from the top), given the
// folder's matcher and whether the folder is ignored: whether it is
// ignored (matched, or in an ignored folder), and whether it is left out
// (ignored and not tracked).
func (r *gitRules) match(m gitignore.Matcher, p []string, isDir, inIgnored bool) (ignored, skip bool) {
	ignored = inIgnored || m.Match(p, isDir)
	return ignored, ignored && !r.tracked[strings.Join(p, "/")]
}

// ignored reports whether Git ignores the path rel (slash-separated,
// relative to root), a file or a folder: rel, or a folder above it,
// matches the rules and is not tracked.
func (r *gitRules) ignored(rel string) bool {
	if r == nil {
		return false
	}
	parts := strings.Split(path.Clean(rel), "/")
	comps := r.prefix
	dir := r.root
	patterns := r.patterns
	for i, name := range parts {
		_, err := os.Stat(filepath.Join(dir, ".gitignore"))
		patterns = folder(patterns, dir, comps, err == nil)
		isDir := i < len(parts)-1
		if !isDir {
			fi, err := os.Stat(filepath.Join(dir, name))
			isDir = err == nil && fi.IsDir()
		}
		if _, skip := r.match(gitignore.NewMatcher(patterns), append(slices.Clip(comps), name), isDir, false); skip {
			return true
		}
		comps = append(slices.Clip(comps), name)
		dir = filepath.Join(dir, name)
	}
	return false
}
