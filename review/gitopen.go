package review

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// openWithWorktreeConfig opens the repository holding dir as go-git's
// PlainOpen does (.git found upward, a linked worktree's gitdir and
// commondir followed), leaving out of its configuration the
// worktreeConfig extension, which go-git refuses. git sparse-checkout
// sets it (actions/checkout's sparse-checkout too): it only adds a
// per-worktree configuration file (config.worktree), and nothing review
// reads of a repository depends on it (objects, refs, a branch's upstream,
// in the common configuration). Another extension still fails the open.
func openWithWorktreeConfig(dir string) (*git.Repository, error) {
	top, dot, err := findDotGit(dir)
	if err != nil {
		return nil, err
	}
	var common billy.Filesystem
	if data, err := os.ReadFile(filepath.Join(dot, "commondir")); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dot, c)
		}
		common = osfs.New(c)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s := filesystem.NewStorage(dotgit.NewRepositoryFilesystem(osfs.New(dot), common), cache.NewObjectLRUDefault())
	return git.Open(withoutWorktreeConfig{s}, osfs.New(top))
}

// findDotGit returns the top of the working tree holding dir and its Git
// folder: .git, or the folder a .git file names (gitdir: …).
func findDotGit(dir string) (top, dot string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(filepath.Join(d, git.GitDirName))
		switch {
		case err == nil && fi.IsDir():
			return d, filepath.Join(d, git.GitDirName), nil
		case err == nil:
			data, err := os.ReadFile(filepath.Join(d, git.GitDirName))
			if err != nil {
				return "", "", err
			}
			gitdir, ok := strings.CutPrefix(strings.SplitN(string(data), "\n", 2)[0], "gitdir: ")
			if !ok {
				return "", "", errors.New(".git file has no gitdir: prefix")
			}
			if gitdir = strings.TrimSpace(gitdir); !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(d, gitdir)
			}
			return d, gitdir, nil
		case !errors.Is(err, os.ErrNotExist):
			return "", "", err
		}
		if filepath.Dir(d) == d {
			return "", "", git.ErrRepositoryNotExists
		}
	}
}

// withoutWorktreeConfig is a repository's storage whose configuration
// leaves the worktreeConfig extension out.
type withoutWorktreeConfig struct{ *filesystem.Storage }

func (s withoutWorktreeConfig) Config() (*gitconfig.Config, error) {
	cfg, err := s.Storage.Config() // read anew on each call: changing it changes no one else's
	if err != nil || cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return cfg, err
	}
	if ext := cfg.Raw.Section("extensions").RemoveOption("worktreeConfig"); len(ext.Options) == 0 {
		cfg.Raw.RemoveSection("extensions")
	}
	return cfg, nil
}
