package review

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fluxpack/fluxpack/internal/parallel"
)

// ChangedSince returns what ChangedFiles returns for the tree Extract
// writes for rev and the tree at head (a folder of the Git working tree
// that holds rev; the paths are relative to it), without writing rev's
// files: each file of head is hashed as Git hashes a blob and compared
// with the blob rev's tree names, so a change no layer reads can be told
// before any revision is written (unread).
func ChangedSince(head string, rev Revision) ([]string, error) {
	repo, err := openRepo(head)
	if err != nil {
		return nil, err
	}
	commit, err := repo.CommitObject(plumbing.NewHash(rev.Commit))
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	top, err := Top(head)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(head)
	if err != nil {
		return nil, err
	}
	sub, err := filepath.Rel(top, abs)
	if err != nil || !filepath.IsLocal(sub) && sub != "." {
		return nil, fmt.Errorf("%s is not in the Git working tree %s", head, top)
	}
	prefix := ""
	if sub != "." {
		prefix = filepath.ToSlash(sub) + "/"
	}
	// rev's files under head, as Extract writes them: regular files with
	// their executable bit, links; no submodules.
	type blob struct {
		hash plumbing.Hash
		mode filemode.FileMode
	}
	base := map[string]blob{}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("revision %s: %w", rev, err)
		}
		switch e.Mode {
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink:
		default:
			continue // a folder, a submodule
		}
		if rel, ok := strings.CutPrefix(name, prefix); ok {
			base[rel] = blob{e.Hash, e.Mode}
		}
	}
	rules, err := loadGitRules(head)
	if err != nil {
		return nil, err
	}
	h, err := listTree(head, rules)
	if err != nil {
		return nil, err
	}
	var out, same []string // same: files whose content is to compare
	for p, e := range h {
		b, ok := base[p]
		switch {
		case !ok, e.link != "" != (b.mode == filemode.Symlink), e.regular && e.exec != (b.mode == filemode.Executable):
			out = append(out, p)
		default:
			same = append(same, p)
		}
	}
	for p := range base {
		if _, ok := h[p]; !ok {
			out = append(out, p)
		}
	}
	differ := make([]bool, len(same))
	errs := make([]error, len(same))
	parallel.For(len(same), func(i int) {
		p := same[i]
		var data []byte
		if e := h[p]; e.link != "" {
			data = []byte(e.link)
		} else if data, errs[i] = os.ReadFile(filepath.Join(head, filepath.FromSlash(p))); errs[i] != nil {
			return
		}
		differ[i] = plumbing.ComputeHash(plumbing.BlobObject, data) != base[p].hash
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, p := range same {
		if differ[i] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
