package oci

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/pkg/sourceignore"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// DefaultIgnorePaths are excluded from every artifact, as by the flux CLI's
// push and build artifact (sourceignore's ExcludeVCS and ExcludeExt).
func DefaultIgnorePaths() []string {
	return slices.Concat(strings.Split(sourceignore.ExcludeVCS, ","), strings.Split(sourceignore.ExcludeExt, ","))
}

// entry is one file or directory of the artifact, in archive order.
type entry struct {
	name string // slash-separated path in the archive; "." for the root
	link string // the target's real path when the entry is reached through a symlink
	dir  bool
	// id is the identity of a file's content (its target's, through a
	// symlink) when the scan read it, for the tree cache (WithTreeCache).
	id inputfile.Identity
	// data and mode are a file's content and archive mode in a tree held
	// in memory (see Tree); nil data there is an empty file.
	data []byte
	mode int64
}

// src is the path to read for e.
func (t *tree) src(e entry) string {
	if e.link != "" {
		return e.link
	}
	return t.root + string(filepath.Separator) + filepath.FromSlash(e.name)
}

// normalMode is the permission the archive records: 0755 for directories and
// files with any execute bit, else 0644.
func normalMode(m fs.FileMode) int64 {
	if m.IsDir() || m.Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// tree is the list of what goes into an artifact.
type tree struct {
	root    string // absolute path of the directory
	entries []entry
	// scanned is when the scan began: the identities of the entries were
	// read after it (see inputfile.Identity.Settled).
	scanned time.Time
	// cached is the tree cache's entry for root, read by a scan with stat
	// (WithTreeCache), or nil.
	cached *treeCacheEntry
	// mem: every file's content is in its entry (a Tree's), read once;
	// the archiver reads nothing and checks no file for Secrets again.
	mem bool
	// ig and frames, kept by a Tree's scan, are the ignore rules and each
	// walked directory's frame by its archive name ("." for the root), so
	// files added in memory are left out as a walk would leave them out.
	ig     *ignorer
	frames map[string]*frame
}

// FileError is a problem with one file of the tree (its path as the
// caller named the tree, joined with the file), at a line when known: the
// type every fluxpack package returns, so one errors.As serves all.
type FileError = errdefs.FileError

// Errors a tree can have, for errors.Is.
var (
	ErrSymlinkEscape   = errors.New("symlink points outside the tree (Flux would leave it out; fluxpack follows symlinks, so it refuses one it cannot follow: copy the target in, or leave the link out with WithIgnorePaths or .sourceignore)")
	ErrSymlinkCycle    = errors.New("symlink makes a cycle")
	ErrSpecialFile     = errors.New("not a regular file, directory or symlink")
	ErrPlaintextSecret = errors.New("plaintext Secret (encrypt it with SOPS, or allow it with WithAllowSecrets)")
	ErrEmptyTree       = errors.New("no file to archive once ignore rules apply (an empty artifact would make Flux prune all it applied)")
)

// checkNotEmpty refuses a tree without files: pushed, it would make every
// Kustomization reconciling it delete what it applied.
func (t *tree) checkNotEmpty(display string) error {
	for _, e := range t.entries {
		if !e.dir {
			return nil
		}
	}
	return &FileError{Path: display, Err: ErrEmptyTree}
}

// scanTree lists the entries of dir in the order Flux archives them (a
// lexical walk), leaving out ignored paths and following symlinks that stay
// inside dir. With stat, every file entry gets its identity.
func scanTree(dir string, o *options, stat bool) (*tree, error) {
	return scan(dir, o, false, stat)
}

// scan is scanTree; keep keeps the ignore rules and frames in the tree.
func scan(dir string, o *options, keep, stat bool) (*tree, error) {
	scanned := time.Now()
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &FileError{Path: dir, Err: errors.New("not a directory")}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	ig := newIgnorer(real, o.ignorePaths)
	top := ig.rootFrame()
	s := &scanner{display: dir, root: real, ig: ig, onStack: map[string]bool{}, log: o.logger, stat: stat}
	t := &tree{root: real, entries: []entry{{name: ".", dir: true}}, scanned: scanned}
	if stat && o.treeCache != "" {
		if t.cached = loadTreeCache(o.treeCache, real); t.cached != nil && t.cached.Entries > 0 {
			t.entries = append(make([]entry, 0, min(t.cached.Entries, 1<<20)), t.entries...)
		}
	}
	if keep {
		t.ig, t.frames = ig, map[string]*frame{".": top}
		s.frames = t.frames
	}
	if err := s.walk(real, top, &t.entries); err != nil {
		return nil, err
	}
	return t, nil
}

type scanner struct {
	display string // the directory as the caller named it, for errors
	root    string // its real path
	ig      *ignorer
	onStack map[string]bool   // real paths of the directories being walked
	log     *slog.Logger      // for what is skipped, or nil
	frames  map[string]*frame // each walked directory's frame, when kept
	stat    bool              // read each file's identity (entry.id)
}

// walk appends the entries under the directory whose real path is real and
// whose place in the tree is f, once f has its directory's .sourceignore.
func (s *scanner) walk(real string, f *frame, out *[]entry) error {
	s.onStack[real] = true
	defer delete(s.onStack, real)
	des, err := inputfile.ReadDir(real, s.stat)
	if err != nil {
		return s.fileErr(f.rel, err)
	}
	hasIgnoreFile := slices.ContainsFunc(des, func(de inputfile.DirEntry) bool { return de.Name == sourceignore.IgnoreFile })
	if err := s.ig.load(f, real, hasIgnoreFile); err != nil {
		return s.fileErr(f.rel, err)
	}
	prefix := "" // of the entries' archive names
	if len(f.rel) > 0 {
		prefix = strings.Join(f.rel, "/") + "/"
	}
	for _, de := range des { // sorted by name: Flux's lexical walk
		name := de.Name
		typ, id := de.Type, de.ID
		if typ.IsRegular() { // the common case, without the allocations below
			if !s.ig.excluded(f, name, false) {
				*out = append(*out, entry{name: prefix + name, id: id})
			}
			continue
		}
		childRel := append(f.rel[:len(f.rel):len(f.rel)], name)
		src := filepath.Join(real, name)
		var link string
		if typ&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(src)
			if errors.Is(err, fs.ErrNotExist) {
				// A dangling link (into a git-ignored folder, say): Flux
				// leaves every symlink out of an artifact, so this one
				// goes too.
				if s.log != nil {
					s.log.Warn("skipping a symlink whose target does not exist, as Flux leaves it out", "path", filepath.Join(append([]string{s.display}, childRel...)...))
				}
				continue
			}
			if err != nil {
				return s.fileErr(childRel, fmt.Errorf("resolving symlink: %w", err))
			}
			if !within(s.root, target) {
				return s.fileErr(childRel, fmt.Errorf("%w: %s", ErrSymlinkEscape, target))
			}
			fi, err := os.Stat(target)
			if err != nil {
				return s.fileErr(childRel, err)
			}
			src, link, typ = target, target, fi.Mode().Type()
			if fi.IsDir() && s.onStack[target] {
				return s.fileErr(childRel, fmt.Errorf("%w: %s", ErrSymlinkCycle, target))
			}
			if s.stat && typ.IsRegular() {
				if id, err = inputfile.Stat(target); err != nil {
					return s.fileErr(childRel, err)
				}
			}
		}
		isDir := typ.IsDir()
		if s.ig.excluded(f, name, isDir) {
			continue // an excluded directory's contents are excluded too, as in git
		}
		switch {
		case isDir:
			*out = append(*out, entry{name: strings.Join(childRel, "/"), link: link, dir: true})
			child := s.ig.child(f, name)
			if s.frames != nil {
				s.frames[strings.Join(childRel, "/")] = child
			}
			if err := s.walk(src, child, out); err != nil {
				return err
			}
		case typ.IsRegular(): // mode and size are read when the file is opened
			*out = append(*out, entry{name: strings.Join(childRel, "/"), link: link, id: id})
		default:
			return s.fileErr(childRel, fmt.Errorf("%w (%s)", ErrSpecialFile, typ))
		}
	}
	return nil
}

func (s *scanner) fileErr(rel []string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{Path: filepath.Join(append([]string{s.display}, rel...)...), Err: err}
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
