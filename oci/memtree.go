package oci

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/sourceignore"
)

// Tree is a directory read into memory as an artifact would hold it: the
// files Push would archive (ignore rules applied, symlinks followed, no
// plaintext Secret), each read once. With and Without make trees that
// share its files, and PushTree pushes one without reading the disk again.
// It is for pushing many artifacts that share most of their files, say a
// fleet's, one per cluster, each the same folders with its own render.
//
// A Tree holds every file's content, so its memory is the size of the
// tree's files. It is safe for use by several goroutines at once.
type Tree struct {
	t            *tree
	display      string // the directory as the caller named it
	allowSecrets bool
	// clean holds the sha256 of contents that With found to hold no
	// plaintext Secret, shared by the trees made from one ReadTree: a
	// fleet's clusters add mostly the same files.
	clean *cleanSet
	// held are the files ReadTree found to be IaC outputs (a value marked
	// sensitive, or named by a Stack or Fleet file of the tree), each with
	// its error: PushTree refuses a tree that still holds one (Without
	// may have taken it out, as a fleet takes out its outputs files).
	held map[string]error
}

// cleanSet is a set of content digests, up to cleanLimit; when full it
// starts again empty.
type cleanSet struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]struct{}
}

const cleanLimit = 1 << 14

func (c *cleanSet) has(d [sha256.Size]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[d]
	return ok
}

func (c *cleanSet) add(d [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cleanLimit {
		c.m = map[[sha256.Size]byte]struct{}{}
	}
	c.m[d] = struct{}{}
}

// checkSecret is checkSecret for a file With adds, remembering the
// contents found clean.
func (t *Tree) checkSecret(name string, data []byte) error {
	if err := sensitiveOutput(t.display, name, data); err != nil {
		return err
	}
	if !maySecret(name, data) {
		return nil
	}
	d := sha256.Sum256(data)
	if t.clean.has(d) {
		return nil
	}
	if err := checkSecret(t.display, name, data); err != nil {
		return err
	}
	t.clean.add(d)
	return nil
}

// ReadTree reads dir into memory as Push would archive it, with the
// options WithIgnorePaths, WithAllowSecrets and WithLogger. Its errors are
// Push's for the same tree (a *FileError naming the file).
func ReadTree(dir string, opts ...TreeOption) (*Tree, error) {
	o, err := collect(nil, opts, func(x TreeOption, o *options) error { return x.applyBuild(o) })
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	t, err := scan(dir, o, true, false)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	a := &archiver{display: dir}
	held := map[string]error{}
	var inputs namedInputs
	for i := range t.entries {
		e := &t.entries[i]
		if e.dir {
			continue
		}
		data, mode, err := readWhole(t.src(*e), func(size int64) error { return a.account(*e, size) })
		if err == nil && !o.allowSecrets {
			err = checkSecret(dir, e.name, data)
			if serr := sensitiveOutput(dir, e.name, data); serr != nil {
				held[e.name] = serr
			}
			inputs.add(e.name, data)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", dir, a.fileErr(*e, err))
		}
		e.data, e.mode = data, mode
	}
	for name, by := range inputs {
		if _, ok := held[name]; !ok {
			held[name] = &FileError{Path: filepath.Join(dir, filepath.FromSlash(name)), Err: fmt.Errorf("%s: %w", by, ErrOutputsFile)}
		}
	}
	t.mem = true
	return &Tree{t: t, display: dir, allowSecrets: o.allowSecrets, clean: &cleanSet{}, held: held}, nil
}

// Check returns what PushTree would refuse in the tree's files, unless it
// was read WithAllowSecrets: IaC outputs files (ErrOutputsFile) and files
// holding a value marked sensitive (ErrSensitiveOutput), each a
// *FileError, all of them joined. Plaintext Secrets ReadTree refuses
// itself.
func (t *Tree) Check() error {
	var errs []error
	for _, e := range t.t.entries {
		if err, ok := t.held[e.name]; ok && !e.dir {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readWhole reads a regular file of any size, with its archive mode,
// once account, given its size, lets it in.
func readWhole(p string, account func(size int64) error) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%w (%s)", ErrSpecialFile, fi.Mode().Type())
	}
	if err := account(fi.Size()); err != nil {
		return nil, 0, err
	}
	buf := make([]byte, fi.Size())
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, 0, err
	}
	if n != len(buf) {
		return nil, 0, fmt.Errorf("file changed while being read (%d bytes, then %d)", fi.Size(), n)
	}
	return buf, normalMode(fi.Mode()), nil
}

// checkSecret refuses a plaintext Secret in the file name of the tree dir.
func checkSecret(dir, name string, data []byte) error {
	if line, obj := plaintextSecret(name, data); line > 0 {
		return &FileError{Path: filepath.Join(dir, filepath.FromSlash(name)), Line: line, Err: fmt.Errorf("%s: %w", obj, ErrPlaintextSecret)}
	}
	return nil
}

// Files lists the archive names of the tree's files (slash-separated,
// relative to its directory), in archive order.
func (t *Tree) Files() []string {
	var names []string
	for _, e := range t.t.entries {
		if !e.dir {
			names = append(names, e.name)
		}
	}
	return names
}

// Without returns a tree without the named files (slash-separated paths
// relative to the tree's directory); names it does not hold are ignored.
// A directory left empty stays, as an empty directory on disk would.
func (t *Tree) Without(names ...string) *Tree {
	drop := map[string]bool{}
	for _, n := range names {
		drop[path.Clean(n)] = true
	}
	out := *t
	nt := *t.t
	nt.entries = slices.DeleteFunc(slices.Clone(t.t.entries), func(e entry) bool { return !e.dir && drop[e.name] })
	out.t = &nt
	return &out
}

// With returns a tree whose folder dir (slash-separated, relative to the
// tree's directory, "." for the whole tree) holds files instead of what it
// held: their names are slash-separated and relative to dir, their content
// is archived with mode 0644, and parent directories are made as needed.
// The tree's ignore rules apply to them as to files on disk, and a
// plaintext Secret among them is refused unless the tree was read
// WithAllowSecrets. A file named .sourceignore is refused: rules made in
// memory are not applied. t is not changed; files are not copied, so they
// must not change while the tree is in use.
func (t *Tree) With(dir string, files map[string][]byte) (*Tree, error) {
	dir, err := cleanRel(dir)
	if err != nil {
		return nil, fmt.Errorf("replacing %s in %s: %w", dir, t.display, err)
	}
	under := func(name string) bool { return dir == "." || name == dir || strings.HasPrefix(name, dir+"/") }
	entries := slices.DeleteFunc(slices.Clone(t.t.entries), func(e entry) bool { return e.name != "." && under(e.name) && e.name != dir })
	have, isFile := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.dir {
			have[e.name] = true
		} else {
			isFile[e.name] = true
		}
	}
	var errs []error
	added := 0
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		name, err := cleanRel(rel)
		if err == nil && name == "." {
			err = errors.New("not a file name")
		}
		if err == nil && path.Base(name) == sourceignore.IgnoreFile {
			err = errors.New("a .sourceignore made in memory is not applied: write it to the tree's directory")
		}
		if dir != "." {
			name = dir + "/" + name
		}
		if err != nil {
			errs = append(errs, &FileError{Path: filepath.Join(t.display, filepath.FromSlash(name)), Err: err})
			continue
		}
		// As on disk, a folder the rules keep is archived even when the
		// rules leave out the file in it.
		kept, admitted := t.t.admit(name)
		for _, d := range kept {
			if !have[d] && !isFile[d] {
				have[d] = true
				entries = append(entries, entry{name: d, dir: true})
				added++
			}
		}
		if !admitted {
			continue
		}
		if d := fileParent(name, isFile); d != "" {
			errs = append(errs, &FileError{Path: filepath.Join(t.display, filepath.FromSlash(name)), Err: fmt.Errorf("%s is a file in the tree, not a folder", d)})
			continue
		}
		if !t.allowSecrets {
			if err := t.checkSecret(name, files[rel]); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		entries = append(entries, entry{name: name, data: files[rel], mode: 0o644})
		added++
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("replacing %s in %s: %w", dir, t.display, errors.Join(errs...))
	}
	if added > 0 {
		slices.SortFunc(entries, func(a, b entry) int { return compareArchiveNames(a.name, b.name) })
	}
	out := *t
	nt := *t.t
	nt.entries = entries
	out.t = &nt
	return &out, nil
}

// admit walks the ignore rules down to the file name (an archive name)
// as the walk of a disk would: it returns the folders on the way that the
// rules keep, from the top, up to the first they leave out, and whether
// they keep the file itself.
func (t *tree) admit(name string) (kept []string, file bool) {
	parts := strings.Split(name, "/")
	f := t.frames["."]
	for i, p := range parts[:len(parts)-1] {
		if t.ig.excluded(f, p, true) {
			return kept, false
		}
		d := strings.Join(parts[:i+1], "/")
		kept = append(kept, d)
		if next, ok := t.frames[d]; ok {
			f = next
		} else {
			f = t.ig.child(f, p)
		}
	}
	return kept, !t.ig.excluded(f, parts[len(parts)-1], false)
}

// fileParent returns the parent folder of name that is a file, or "".
func fileParent(name string, isFile map[string]bool) string {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if isFile[d] {
			return d
		}
	}
	return ""
}

// compareArchiveNames orders archive names as Flux's lexical walk archives
// them: component by component, a directory before what it holds.
func compareArchiveNames(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == ".":
		return -1
	case b == ".":
		return 1
	}
	for {
		ah, at, aMore := strings.Cut(a, "/")
		bh, bt, bMore := strings.Cut(b, "/")
		if c := strings.Compare(ah, bh); c != 0 {
			return c
		}
		switch {
		case !aMore && !bMore:
			return 0
		case !aMore:
			return -1
		case !bMore:
			return 1
		}
		a, b = at, bt
	}
}

// cleanRel checks a slash-separated path relative to a tree and cleans it.
func cleanRel(p string) (string, error) {
	c := path.Clean(p)
	switch {
	case p == "":
		return "", errors.New("empty path")
	case path.IsAbs(p), strings.Contains(p, `\`):
		return c, fmt.Errorf("path %q: want a slash-separated path relative to the tree", p)
	case c == ".." || strings.HasPrefix(c, "../"):
		return c, fmt.Errorf("path %q leaves the tree", p)
	}
	return c, nil
}

// PushTree pushes the tree t as Push pushes a directory (the same
// artifact, the same "unchanged" test, tags written last, signing), but
// reads no file: a fleet of clusters sharing one tree costs one read of
// it. The tree options (WithIgnorePaths, WithAllowSecrets) were ReadTree's
// and are refused here.
//
// PushTree is Client.PushTree with url parsed, on a Client of its own.
func PushTree(ctx context.Context, t *Tree, url string, opts ...PushOption) (*Result, error) {
	ref, err := ParseRef(url)
	if err != nil {
		display := ""
		if t != nil {
			display = t.display + " "
		}
		return nil, fmt.Errorf("pushing %sto %s: %w", display, redactRef(url), err)
	}
	return new(Client).PushTree(ctx, t, ref, opts...)
}

// PushTree pushes the tree t to ref's tag, as the package-level PushTree
// describes.
func (c *Client) PushTree(ctx context.Context, t *Tree, ref Ref, opts ...PushOption) (*Result, error) {
	if t == nil {
		return nil, fmt.Errorf("pushing to %s: %w: nil Tree", ref, ErrInvalidOption)
	}
	check := func(o *options) error {
		if o.ignorePaths != nil || o.allowSecrets {
			return fmt.Errorf("%w: WithIgnorePaths and WithAllowSecrets apply when the tree is read: give them to ReadTree", ErrInvalidOption)
		}
		return nil
	}
	return run(ctx, c, fmt.Sprintf("pushing %s to %s", t.display, ref), opts, PushOption.applyPush, check, func(o *options) (*Result, error) {
		tag, err := ref.at(o).tagRef()
		if err != nil {
			return nil, err
		}
		if err := t.Check(); err != nil {
			return nil, err
		}
		return pushTree(ctx, t.t, t.display, tag, o)
	})
}
