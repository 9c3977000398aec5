package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/review"
)

// tagObjects compares, object by object, the files a tag and a folder
// hold differently: the artifact is pulled into a temporary folder,
// removed before returning.
func tagObjects(ctx context.Context, dir, url string, res *oci.DiffResult, opts []oci.PullOption) ([]review.ObjectChange, error) {
	tmp, err := os.MkdirTemp("", "fluxpack-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	pulled := filepath.Join(tmp, "artifact")
	if _, err := oci.Pull(ctx, url, pulled, opts...); err != nil {
		return nil, err
	}
	differ := map[string]bool{}
	for _, l := range [][]string{res.Added, res.Removed, res.Modified} {
		for _, p := range l {
			differ[p] = true
		}
	}
	only := func(rel string) bool { return !strings.HasSuffix(rel, "/") && !differ[rel] }
	base, err := review.FolderObjects(pulled, only)
	if err != nil {
		return nil, err
	}
	head, err := review.FolderObjects(dir, only)
	if err != nil {
		return nil, err
	}
	return review.DiffObjects(base, head, review.DefaultStripAttrs), nil
}

func printDiff(w io.Writer, url string, res *oci.DiffResult) error {
	switch res.Status {
	case oci.Missing:
		_, err := fmt.Fprintf(w, "missing: %s does not exist\n", url)
		return err
	case oci.Identical:
		_, err := fmt.Fprintf(w, "identical: %s (%s)\n", url, res.Digest)
		return err
	}
	if _, err := fmt.Fprintf(w, "differs: %s (%s)\n", url, res.Digest); err != nil {
		return err
	}
	for _, group := range []struct {
		mark  string
		paths []string
	}{{"+", res.Added}, {"-", res.Removed}, {"~", res.Modified}} {
		for _, p := range group.paths {
			if _, err := fmt.Fprintf(w, "%s %s\n", group.mark, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// count is n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
