package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fluxpack/fluxpack/internal/gittree"
)

// A partial clone (actions/checkout's filter: blob:none, or tree:0) holds
// a revision's commit but not all its files: git fetches what is missing
// from the promisor remote when it is asked for, go-git does not and says
// "object not found". writeRevision then has git archive write the
// revision instead. git archive writes files as a checkout would: the
// repository's .gitattributes apply (eol=crlf turns LF into CRLF,
// export-ignore leaves a file out), where go-git writes the blobs as
// committed, as Flux's source-controller fetches them. The usual
// home-ops "* text=auto eol=lf" changes nothing: on the 80 base revisions
// of nine public repositories a review check kept, go-git and git archive
// wrote the same bytes.

// writeRevision writes the tree of rev, in the Git repository holding dir,
// into dst, an empty folder, with write (go-git); when that fails but for
// ctx, git archive run in dir writes it instead, if dir is not "" and the
// git command is there and can. The error is write's when both fail.
func writeRevision(ctx context.Context, dir string, rev Revision, dst string, write func() error) error {
	err := write()
	if err == nil || ctx.Err() != nil || dir == "" || gitCLIOff.Load() || gitPath() == "" {
		return err
	}
	if rerr := emptyDir(dst); rerr != nil {
		return errors.Join(err, rerr)
	}
	if aerr := gitArchive(ctx, dir, rev.Commit, dst); aerr != nil {
		_ = emptyDir(dst)
		return err
	}
	return nil
}

// emptyDir removes what dir holds, keeping dir.
func emptyDir(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range des {
		if err := os.RemoveAll(filepath.Join(dir, d.Name())); err != nil {
			return err
		}
	}
	return nil
}

// gitArchive writes the tree of commit into dst from git archive, run in
// dir: regular files with their executable bit, symbolic links as links.
func gitArchive(ctx context.Context, dir, commit, dst string) error {
	if !isHash(commit) {
		return fmt.Errorf("git archive: %q is not a commit", commit)
	}
	cmd := exec.CommandContext(ctx, gitPath(), "-C", dir, "archive", "--format=tar", commit)
	cmd.Env = gitEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	werr := gittree.WriteArchive(out, dst)
	_, _ = io.Copy(io.Discard, out) // git ends once its output is read
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return werr
}
