package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/layering"
)

// renderedEntries are the top-level names WriteDir writes; a directory
// holding only these is a previous render it may replace.
var renderedEntries = []string{"kustomization.yaml", "source.yaml", "layers", "releases", "vars", "wake.yaml", "wake"}

// WriteDir writes the Plan's Files, plus extra files (say the variables'
// ConfigMap under vars/, listed in kustomization.yaml), to dir atomically: into a temporary directory next
// to it, renamed into place only when complete. dir may not exist yet, be
// empty, or hold a previous render, which is replaced whole; anything else
// in it is refused, so no user file is ever deleted. Files are 0644 and
// directories 0755 whatever the umask.
func WriteDir(p *layering.Plan, dir string, extra ...layering.File) error {
	for _, f := range extra {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || !strings.HasPrefix(f.Path, "vars/") {
			return fmt.Errorf("writing %s: extra file %q must be a relative path under vars/", dir, f.Path)
		}
	}
	files, err := p.Files(extra...)
	if err != nil {
		return err
	}
	return writeAtomic(dir, files)
}

func writeAtomic(dir string, files []layering.File) error {
	st, err := stageFiles(dir, files)
	if err != nil {
		return err
	}
	return st.commit()
}

// stagedFiles are a render's files written to a directory beside dir,
// to be renamed into place by commit or removed by abort.
type stagedFiles struct {
	dir    string
	exists bool // dir held a previous render
	st     *atomicfile.StagedDir
}

// stageFiles writes files to a directory beside dir, once dir is known to
// be replaceable (checkReplaceable). Nothing is in place until commit.
func stageFiles(dir string, files []layering.File) (*stagedFiles, error) {
	dir = filepath.Clean(dir)
	exists, err := checkReplaceable(dir)
	if err != nil {
		return nil, err
	}
	st, err := atomicfile.StageDir(dir)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", dir, err)
	}
	s := &stagedFiles{dir: dir, exists: exists, st: st}
	if err := s.fill(files); err != nil {
		st.Abort()
		return nil, err
	}
	return s, nil
}

func (s *stagedFiles) fill(files []layering.File) error {
	tmp := s.st.Path()
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", s.dir, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(s.dir, f.Path), err)
		}
		if err := os.Chmod(p, 0o644); err != nil { // whatever the umask
			return fmt.Errorf("writing %s: %w", s.dir, err)
		}
	}
	if err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chmod(p, 0o755)
	}); err != nil {
		return fmt.Errorf("writing %s: %w", s.dir, err)
	}
	return nil
}

// commit renames the staged directory to dir, replacing a previous render
// whole.
func (s *stagedFiles) commit() error {
	if err := s.st.Commit(); err != nil {
		if s.exists {
			return fmt.Errorf("replacing %s: %w", s.dir, err)
		}
		return fmt.Errorf("writing %s: %w", s.dir, err)
	}
	return nil
}

// abort removes the staged directory; after commit it does nothing.
func (s *stagedFiles) abort() { s.st.Abort() }

// checkReplaceable reports whether dir exists, and refuses a dir holding
// anything a render does not write.
func checkReplaceable(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", dir, err)
	}
	for _, e := range entries {
		if !slices.Contains(renderedEntries, e.Name()) {
			return false, fmt.Errorf("writing %s: refusing to replace a directory holding %s, which fluxpack does not write", dir, e.Name())
		}
	}
	return true, nil
}
