package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fluxpack/fluxpack/internal/gittree"
)

// ErrNoBase is wrapped by DefaultBase's error when the checkout has no
// upstream to compare with.
var ErrNoBase = errors.New("no base revision")

// Revision is a commit of a Git repository, read without a checkout.
type Revision struct {
	// Name is what the caller asked for (a branch, tag, or hash);
	// Commit the full hash it resolves to.
	Name   string
	Commit string
}

func (r Revision) String() string {
	if r.Name == "" || strings.HasPrefix(r.Commit, r.Name) {
		return r.Commit[:min(12, len(r.Commit))]
	}
	return r.Name + " (" + r.Commit[:min(12, len(r.Commit))] + ")"
}

// openRepo opens the Git repository holding dir; one go-git refuses only
// for its worktreeConfig extension too (openWithWorktreeConfig).
func openRepo(dir string) (*git.Repository, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrUnsupportedExtensionRepositoryFormatVersion) || errors.Is(err, git.ErrUnknownExtension) {
		if r, werr := openWithWorktreeConfig(dir); werr == nil {
			return r, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening the Git repository of %s: %w", dir, err)
	}
	return repo, nil
}

// Resolve resolves rev (a branch, remote branch, tag, hash or anything
// git rev-parse takes that go-git does: HEAD~1, origin/main) in the Git
// repository holding dir.
func Resolve(dir, rev string) (Revision, error) {
	repo, err := openRepo(dir)
	if err != nil {
		return Revision{}, err
	}
	return resolveIn(repo, dir, rev)
}

// resolveIn is Resolve in an open repository, the one holding dir.
func resolveIn(repo *git.Repository, dir, rev string) (Revision, error) {
	if c, _, ok := gitResolve(dir, rev); ok {
		return Revision{Name: rev, Commit: c}, nil
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return Revision{}, fmt.Errorf("revision %q: %w", rev, err)
	}
	return Revision{Name: rev, Commit: h.String()}, nil
}

// DefaultBase returns where a change checked out at dir started: the
// merge-base of HEAD with its branch's upstream (branch.NAME.merge of
// branch.NAME.remote), else with origin/HEAD, origin/main or
// origin/master, the first that exists. In CI, where the checkout is a
// detached pull-request merge, pass the target branch explicitly.
func DefaultBase(dir string) (Revision, error) {
	repo, err := openRepo(dir)
	if err != nil {
		return Revision{}, err
	}
	return defaultBaseIn(repo, dir)
}

// defaultBaseIn is DefaultBase in an open repository, the one holding dir.
func defaultBaseIn(repo *git.Repository, dir string) (Revision, error) {
	head, err := repo.Head()
	if err != nil {
		return Revision{}, fmt.Errorf("reading HEAD of %s: %w", dir, err)
	}
	var candidates []string
	if head.Name().IsBranch() {
		if cfg, err := repo.Config(); err == nil {
			if b, ok := cfg.Branches[head.Name().Short()]; ok && b.Remote != "" && b.Merge != "" {
				if b.Remote == "." {
					candidates = append(candidates, b.Merge.Short())
				} else {
					candidates = append(candidates, "refs/remotes/"+b.Remote+"/"+b.Merge.Short())
				}
			}
		}
	}
	candidates = append(candidates, "refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master")
	headCommit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return Revision{}, err
	}
	for _, c := range candidates {
		h, err := repo.ResolveRevision(plumbing.Revision(c))
		if err != nil {
			continue
		}
		up, err := repo.CommitObject(*h)
		if err != nil {
			continue
		}
		bases, err := headCommit.MergeBase(up)
		if err != nil || len(bases) == 0 {
			continue
		}
		return Revision{Name: "merge-base with " + strings.TrimPrefix(c, "refs/remotes/"), Commit: bases[0].Hash.String()}, nil
	}
	return Revision{}, fmt.Errorf("%w: HEAD of %s has no upstream branch (tried %s); give the base revision explicitly (Resolve)", ErrNoBase, dir, strings.Join(candidates, ", "))
}

// Extract writes the files of commit rev of the Git repository holding
// dir into a new folder under tmp (os.TempDir when ""), and returns the
// folder standing for the repository's top and a function that removes
// it. The working tree is neither read nor changed. Symbolic links are
// written as links; submodules are left out.
func Extract(ctx context.Context, dir string, rev Revision, tmp string) (top string, cleanup func() error, err error) {
	repo, err := openRepo(dir)
	if err != nil {
		return "", nil, err
	}
	return extractIn(ctx, repo, rev, tmp)
}

// treeIn returns rev's tree, read by go-git from repo.
func treeIn(repo *git.Repository, rev Revision) (*object.Tree, error) {
	commit, err := repo.CommitObject(plumbing.NewHash(rev.Commit))
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	return tree, nil
}

// extractIn is Extract from an open repository.
func extractIn(ctx context.Context, repo *git.Repository, rev Revision, tmp string) (top string, cleanup func() error, err error) {
	dir, _ := topOf(repo, "") // "": no git archive to fall back on
	out, err := os.MkdirTemp(tmp, "fluxpack-base-")
	if err != nil {
		return "", nil, err
	}
	remove := func() error { return os.RemoveAll(out) }
	write := func() error {
		tree, err := treeIn(repo, rev)
		if err != nil {
			return err
		}
		if err := gittree.Write(ctx, tree, out); err != nil {
			return fmt.Errorf("revision %s: %w", rev, err)
		}
		return nil
	}
	if err := writeRevision(ctx, dir, rev, out, write); err != nil {
		_ = remove() // nothing half-written is left behind
		return "", nil, err
	}
	return out, remove, nil
}

// Top returns the top of the Git working tree holding dir.
func Top(dir string) (string, error) {
	repo, err := openRepo(dir)
	if err != nil {
		return "", err
	}
	return topOf(repo, dir)
}

// topOf is Top of an open repository, the one holding dir.
func topOf(repo *git.Repository, dir string) (string, error) {
	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("the Git repository of %s has no working tree: %w", dir, err)
	}
	return wt.Filesystem.Root(), nil
}
