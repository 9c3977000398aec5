package fluxbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// A kustomize build is a function of its kustomization (the cache key)
// and of what its file system answers. recordFS records every answer the
// disk gives the build, as the question (an operation and a path relative
// to the source's root) and a digest of the answer; a later build with
// the same key asks the same questions again (replay) and takes the
// cached objects only when every answer is the same. That holds however
// the build found its files: resources of other directories, components,
// `..` paths, patches, generators' files, the kustomization file names it
// probes and did not find, and files outside the source's root (a
// bootstrap folder's component beside it: asked again at the same place
// from the root, as the build would ask). What it cannot replay (a
// relative path, a write, Open, Walk) makes the build uncacheable.

// Operations of a read, as recorded.
const (
	opRead    = 'f' // ReadFile: the content's sha256, or an error
	opExists  = 'e' // Exists
	opIsDir   = 'd' // IsDir
	opList    = 'l' // ReadDir: the sha256 of the names
	opGlob    = 'g' // Glob: the sha256 of the matches, relative
	opCleaned = 'c' // CleanedAbs: the directory, relative, and the file
)

// fsRead is one question a build asked its file system, and a digest of
// the answer.
type fsRead struct {
	op     byte
	rel    string // slash-separated, relative to the source's root
	answer string
}

// recordFS is the disk, recording what a build reads under root (the
// source's root, symbolic links resolved).
type recordFS struct {
	filesys.FileSystem
	root string

	mu     sync.Mutex
	reads  []fsRead
	seen   map[string]bool // op and rel of the reads recorded
	bypass string          // why the build cannot be cached, or ""
}

func newRecordFS(root string) *recordFS {
	return &recordFS{FileSystem: filesys.MakeFsOnDisk(), root: root, seen: map[string]bool{}}
}

// rel is p relative to the root, slash-separated (with leading `..` when
// p is outside it), or false (and the build not cacheable) when p is not
// an absolute path.
func (r *recordFS) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		r.refuse("a relative path")
		return "", false
	}
	rel, err := filepath.Rel(r.root, filepath.Clean(p))
	if err != nil {
		r.refuse("a path the source's root does not lead to")
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func (r *recordFS) refuse(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bypass == "" {
		r.bypass = why
	}
}

// record keeps the first answer to each question: the build asked the
// same file system, so later ones are the same.
func (r *recordFS) record(op byte, rel, answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := string(op) + rel
	if r.seen[k] {
		return
	}
	r.seen[k] = true
	r.reads = append(r.reads, fsRead{op: op, rel: rel, answer: answer})
}

func (r *recordFS) ReadFile(p string) ([]byte, error) {
	data, err := r.FileSystem.ReadFile(p)
	if rel, ok := r.rel(p); ok {
		r.record(opRead, rel, fileAnswer(data, err))
	}
	return data, err
}

func (r *recordFS) Exists(p string) bool {
	ok := r.FileSystem.Exists(p)
	if rel, in := r.rel(p); in {
		r.record(opExists, rel, boolAnswer(ok))
	}
	return ok
}

func (r *recordFS) IsDir(p string) bool {
	ok := r.FileSystem.IsDir(p)
	if rel, in := r.rel(p); in {
		r.record(opIsDir, rel, boolAnswer(ok))
	}
	return ok
}

func (r *recordFS) ReadDir(p string) ([]string, error) {
	names, err := r.FileSystem.ReadDir(p)
	if rel, ok := r.rel(p); ok {
		r.record(opList, rel, listAnswer(names, err))
	}
	return names, err
}

func (r *recordFS) Glob(pattern string) ([]string, error) {
	matches, err := r.FileSystem.Glob(pattern)
	if rel, ok := r.rel(pattern); ok {
		if a, ok := r.globAnswer(matches, err); ok {
			r.record(opGlob, rel, a)
		}
	}
	return matches, err
}

func (r *recordFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	d, f, err := r.FileSystem.CleanedAbs(p)
	if rel, ok := r.rel(p); ok {
		if a, ok := r.cleanedAnswer(d, f, err); ok {
			r.record(opCleaned, rel, a)
		}
	}
	return d, f, err
}

// What a build must not do, or does in a way that is not replayed: it
// still happens, and the build is not cached.

func (r *recordFS) Open(p string) (filesys.File, error) {
	r.refuse("Open")
	return r.FileSystem.Open(p)
}

func (r *recordFS) Walk(p string, fn filepath.WalkFunc) error {
	r.refuse("Walk")
	return r.FileSystem.Walk(p, fn)
}

func (r *recordFS) Create(p string) (filesys.File, error) {
	r.refuse("a write")
	return r.FileSystem.Create(p)
}

func (r *recordFS) Mkdir(p string) error {
	r.refuse("a write")
	return r.FileSystem.Mkdir(p)
}

func (r *recordFS) MkdirAll(p string) error {
	r.refuse("a write")
	return r.FileSystem.MkdirAll(p)
}

func (r *recordFS) RemoveAll(p string) error {
	r.refuse("a write")
	return r.FileSystem.RemoveAll(p)
}

func (r *recordFS) WriteFile(p string, data []byte) error {
	r.refuse("a write")
	return r.FileSystem.WriteFile(p, data)
}

// snapshot returns the reads, sorted, or why the build cannot be cached.
func (r *recordFS) snapshot() ([]fsRead, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bypass != "" {
		return nil, r.bypass
	}
	reads := slices.Clone(r.reads)
	slices.SortFunc(reads, func(a, b fsRead) int {
		if c := strings.Compare(a.rel, b.rel); c != 0 {
			return c
		}
		return int(a.op) - int(b.op)
	})
	return reads, ""
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileAnswer(data []byte, err error) string {
	if err != nil {
		return errAnswer(err)
	}
	return digest(data)
}

func errAnswer(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "!missing"
	}
	return "!error"
}

func boolAnswer(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func listAnswer(names []string, err error) string {
	if err != nil {
		return errAnswer(err)
	}
	return digest([]byte(strings.Join(names, "\x00")))
}

func (r *recordFS) globAnswer(matches []string, err error) (string, bool) {
	if err != nil {
		return errAnswer(err), true
	}
	rels := make([]string, len(matches))
	for i, m := range matches {
		rel, ok := r.rel(m)
		if !ok {
			return "", false
		}
		rels[i] = rel
	}
	return digest([]byte(strings.Join(rels, "\x00"))), true
}

func (r *recordFS) cleanedAnswer(d filesys.ConfirmedDir, f string, err error) (string, bool) {
	if err != nil {
		return errAnswer(err), true
	}
	rel, ok := r.rel(d.String())
	if !ok {
		return "", false
	}
	return rel + "\x00" + f, true
}

// replay asks the disk under root the questions of reads and reports
// whether every answer is the one recorded; snap, when not nil, answers
// those it was asked before.
func replay(root string, reads []fsRead, snap *Snapshot) bool {
	disk := filesys.MakeFsOnDisk()
	check := &recordFS{FileSystem: disk, root: root, seen: map[string]bool{}}
	for _, rd := range reads {
		p := filepath.Join(root, filepath.FromSlash(rd.rel))
		// The root is in the key: a glob's and CleanedAbs's answers are
		// relative to it, and two roots reach the same p through `..`.
		got, ok := snap.answer(string(rd.op)+root+"\x00"+p, func() (string, bool) {
			switch rd.op {
			case opRead:
				return fileAnswer(disk.ReadFile(p)), true
			case opExists:
				return boolAnswer(disk.Exists(p)), true
			case opIsDir:
				return boolAnswer(disk.IsDir(p)), true
			case opList:
				return listAnswer(disk.ReadDir(p)), true
			case opGlob:
				m, err := disk.Glob(p)
				return check.globAnswer(m, err)
			case opCleaned:
				d, f, err := disk.CleanedAbs(p)
				return check.cleanedAnswer(d, f, err)
			}
			return "", false
		})
		if !ok || got != rd.answer {
			return false
		}
	}
	return true
}
