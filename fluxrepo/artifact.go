package fluxrepo

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
	pkgtar "github.com/fluxcd/pkg/tar"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigyaml "sigs.k8s.io/yaml"
)

// This file is the one model of what a Flux source's artifact holds, file
// by file, and what each file is made of: the layers' builds read the
// artifacts it lays out, and package review maps the files a change
// touches to the layers they feed through it (View). It follows the
// controllers that make artifacts:
//
//   - source-controller packs a GitRepository's working tree, after its
//     spec.include artifacts are moved in, leaving out what the
//     .sourceignore files and spec.ignore match (pack, include);
//   - it packs an OCIRepository's layer the same way when it extracts it
//     (spec.layerSelector.operation extract, the default), and keeps the
//     layer as it is when it copies it;
//   - source-watcher's ArtifactGenerator copies files of its sources'
//     artifacts into an ExternalArtifact (generate).
//
// Symbolic links are in no artifact: source-controller and source-watcher
// archive regular files only.

// tree is the files of a folder or an artifact: slash path, relative to
// its root → what the file is made of.
type tree map[string]fileSrc

// fileSrc is what one file of an artifact is made of: a file on disk, a
// file of a tarball on disk, or YAML files merged.
type fileSrc struct {
	path  string    // the file on disk (absolute); "" for a merged file
	entry string    // its name in the tarball path, for a file extracted from one (strategy Extract)
	merge []fileSrc // the YAML files merged, in order, the first the base (strategy Merge)
}

// origins returns the files on disk f is made of, in order.
func (f fileSrc) origins() []string {
	if f.merge == nil {
		return []string{f.path}
	}
	var out []string
	for _, m := range f.merge {
		out = append(out, m.origins()...)
	}
	return out
}

// plain reports whether f is a file on disk as it is.
func (f fileSrc) plain() bool { return f.merge == nil && f.entry == "" }

// readTree lists the regular files under dir, .git left out, as
// source-controller archives a working tree.
func readTree(dir string) (tree, error) {
	t := tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			t[relTo(dir, p)] = fileSrc{path: p}
		}
		return nil
	})
	return t, err
}

// splitPath splits a slash path into its elements, as the ignore patterns
// match them ("" for the root: none).
func splitPath(p string) []string {
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// pack is the artifact source-controller archives from the working tree t
// of a source whose spec.ignore is ignore: the .sourceignore files of t
// (each for its own folder and below, in the order
// sourceignore.LoadIgnorePatterns reads them) and then ignore leave files
// out, on top of the version-control files; when there is no pattern at
// all, source-controller's default exclusions (CI files, images,
// archives) apply instead.
func pack(t tree, ignore string) (tree, error) {
	var files []string
	for p, f := range t {
		if path.Base(p) == sourceignore.IgnoreFile && f.plain() {
			files = append(files, p)
		}
	}
	// A folder's own file first, then its sub-folders by name: the
	// elements of the folders, compared in order.
	slices.SortFunc(files, func(a, b string) int { return slices.Compare(splitPath(path.Dir(a)), splitPath(path.Dir(b))) })
	var ps []gitignore.Pattern
	for _, p := range files {
		more, err := sourceignore.ReadIgnoreFile(t[p].path, splitPath(path.Dir(p)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		ps = append(ps, more...)
	}
	ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(ignore), nil)...)
	m := sourceignore.NewDefaultMatcher(nil, nil)
	if len(ps) > 0 {
		m = sourceignore.NewMatcher(append(sourceignore.VCSPatterns(nil), ps...))
	}
	out := tree{}
	for p, f := range t {
		if !m.Match(splitPath(p), false) {
			out[p] = f
		}
	}
	return out, nil
}

// include moves the files under from of an included artifact inc to to in
// the working tree t, as source-controller includes another
// GitRepository's artifact (spec.include, before it packs t): from names
// a folder (its files, "" for all of them) or a file; to is made, and the
// move fails where it cannot rename (os.Rename): onto a folder that holds
// files, a folder onto a file, or below a file.
func include(t, inc tree, from, to string) (tree, error) {
	from = cleanRel(from)
	to = cleanRel(to)
	moved := tree{}
	if f, ok := inc[from]; ok && from != "." {
		moved[to] = f
	} else {
		for p, f := range inc {
			if rel, ok := below(p, from); ok {
				moved[path.Join(to, rel)] = f
			}
		}
		if len(moved) == 0 {
			return nil, fmt.Errorf("%s is not in the artifact", from)
		}
	}
	_, single := moved[to]
	out := make(tree, len(t)+len(moved))
	for p, f := range t {
		if _, under := below(p, to); under && p != to || to == "." {
			return nil, fmt.Errorf("%s is a folder the repository holds files in: the move fails", to)
		}
		if p == to && !single {
			return nil, fmt.Errorf("%s is a file of the repository: a folder cannot replace it", to)
		}
		if _, isParent := below(to, p); isParent && p != to {
			return nil, fmt.Errorf("%s is a file of the repository: %s cannot be made below it", p, to)
		}
		out[p] = f
	}
	for p, f := range moved {
		out[p] = f
	}
	return out, nil
}

// cleanRel cleans a slash path relative to a root that it cannot leave
// ("." for the root itself), as securejoin keeps a path in its root.
func cleanRel(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" {
		return "."
	}
	return p
}

// below returns p relative to dir when p is dir or under it ("." the
// root).
func below(p, dir string) (string, bool) {
	if dir == "." || dir == "" {
		return p, true
	}
	if p == dir {
		return ".", true
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok
}

// copyOp is one copy of an ArtifactGenerator's artifact
// (spec.artifacts[].copy[]).
type copyOp struct {
	From, To string
	Exclude  []string
	Strategy string // Overwrite (""), Merge or Extract
	Optional bool   // a from that matches nothing is skipped, not an error
}

// The copy strategies of source-watcher.
const (
	strategyOverwrite = "Overwrite"
	strategyMerge     = "Merge"
	strategyExtract   = "Extract"
)

// generate is the artifact source-watcher makes from the copies, in order,
// of files of the sources (their artifacts, by alias), as its builder
// copies them, cp-like:
//
//   - from is @alias/pattern and to @artifact/path; a pattern without
//     glob characters (*?[]) names a file or a folder, one with them is
//     matched as fs.Glob matches it, element by element, so "**" is one
//     element like "*", and a folder it matches is copied whole;
//   - a file goes to to/its-name when to ends with "/" or is a folder
//     already, else to to itself; a folder goes to to/its-name (the
//     source's root: to itself);
//   - a glob's match goes to to/match-path, or, for a pattern dir/**, to
//     to/match-path-below-dir;
//   - an exclude pattern (doublestar) leaves out a match, or a file or
//     folder below a folder copied, when it matches the path from the
//     source's root or from the pattern's part before its first glob
//     element; one without "/" matches the name at any depth too;
//   - nothing to copy (no such file, no match, every match excluded) is an
//     error unless the copy is optional; an excluded single file is
//     skipped;
//   - later copies overwrite earlier ones; strategy Merge merges a file
//     onto one already there (files of a folder copied are overwritten);
//     strategy Extract unpacks the tarballs (.tar.gz, .tgz) it selects,
//     skipping other matches of a glob;
//   - the artifact leaves out source-controller's default exclusions
//     (version-control and CI files, images, archives).
func generate(ops []copyOp, sources map[string]tree) (tree, error) {
	st := &staging{files: tree{}, dirs: map[string]bool{}}
	for _, op := range ops {
		if err := st.apply(op, sources); err != nil {
			return nil, fmt.Errorf("copy from %q to %q: %w", op.From, op.To, err)
		}
	}
	m := sourceignore.NewDefaultMatcher(nil, nil)
	out := tree{}
	for p, f := range st.files {
		if !m.Match(splitPath(p), false) {
			out[p] = f
		}
	}
	return out, nil
}

// staging is the artifact being made: its files, and its folders (made by
// copies, files or none below them; "" the root).
type staging struct {
	files tree
	dirs  map[string]bool
}

func (st *staging) isDir(p string) bool { return p == "" || p == "." || st.dirs[p] }

// mkdirAll makes the folder p and those above it.
func (st *staging) mkdirAll(p string) error {
	if p == "" || p == "." {
		return nil
	}
	if _, ok := st.files[p]; ok {
		return fmt.Errorf("%s is a file, not a folder", p)
	}
	if err := st.mkdirAll(path.Dir(p)); err != nil {
		return err
	}
	st.dirs[p] = true
	return nil
}

// put writes f at p, merging it onto the file there with merge.
func (st *staging) put(p string, f fileSrc, merge bool) error {
	if st.isDir(p) {
		return fmt.Errorf("%s is a folder, not a file", p)
	}
	if err := st.mkdirAll(path.Dir(p)); err != nil {
		return err
	}
	if old, ok := st.files[p]; ok && merge {
		f = fileSrc{merge: []fileSrc{old, f}}
	}
	st.files[p] = f
	return nil
}

// source is one source of a generator, with its folders.
type source struct {
	files tree
	paths []string // every file's path, sorted
}

func newSource(t tree) *source {
	s := &source{files: t}
	for p := range t {
		s.paths = append(s.paths, p)
	}
	slices.Sort(s.paths)
	return s
}

// isDir reports whether p is a folder of the source ("." its root).
func (s *source) isDir(p string) bool {
	if p == "." {
		return true
	}
	i, _ := slices.BinarySearch(s.paths, p+"/")
	return i < len(s.paths) && strings.HasPrefix(s.paths[i], p+"/")
}

// under returns the files under the folder dir, sorted.
func (s *source) under(dir string) []string {
	if dir == "." {
		return s.paths
	}
	i, _ := slices.BinarySearch(s.paths, dir+"/")
	j := i
	for j < len(s.paths) && strings.HasPrefix(s.paths[j], dir+"/") {
		j++
	}
	return s.paths[i:j]
}

// glob matches pattern as fs.Glob does over the source's files and
// folders: element by element, each with path.Match, in the order of a
// walk (folders' entries by name).
func (s *source) glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	pat := strings.Split(pattern, "/")
	seen := map[string]bool{}
	var out []string
	for _, p := range s.paths {
		elems := strings.Split(p, "/")
		if len(elems) < len(pat) {
			continue
		}
		c := strings.Join(elems[:len(pat)], "/")
		if seen[c] {
			continue
		}
		seen[c] = true
		if matchElems(pat, elems[:len(pat)]) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) })
	return out, nil
}

// globDeep matches pattern as doublestar.Glob does over the source's
// files and folders: "**" stands for any number of elements.
func (s *source) globDeep(pattern string) ([]string, error) {
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("%w: %s", path.ErrBadPattern, pattern)
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range s.paths {
		elems := strings.Split(p, "/")
		for i := 1; i <= len(elems); i++ {
			c := strings.Join(elems[:i], "/")
			if !seen[c] {
				seen[c] = true
				if doublestar.MatchUnvalidated(pattern, c) {
					out = append(out, c)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) })
	return out, nil
}

func matchElems(pat, elems []string) bool {
	for i, p := range pat {
		if ok, _ := path.Match(p, elems[i]); !ok {
			return false
		}
	}
	return true
}

// globChars are the characters that make a copy's from a glob.
const globChars = "*?[]"

func (st *staging) apply(op copyOp, sources map[string]tree) error {
	rest, ok := strings.CutPrefix(op.From, "@")
	alias, pattern, found := strings.Cut(rest, "/")
	if !ok || !found {
		return errors.New("from must be @alias/pattern")
	}
	dest, ok := strings.CutPrefix(op.To, "@artifact/")
	if !ok {
		return errors.New("to must be @artifact/path")
	}
	if dest != "" && !filepath.IsLocal(filepath.FromSlash(dest)) {
		return errors.New("to leaves the artifact")
	}
	dest = strings.TrimSuffix(path.Clean("/"+dest), "/")
	dest = strings.TrimPrefix(dest, "/")
	t, ok := sources[alias]
	if !ok {
		return fmt.Errorf("no source has alias %q", alias)
	}
	for _, x := range op.Exclude {
		if !doublestar.ValidatePattern(x) {
			return fmt.Errorf("exclude %q is not a pattern", x)
		}
	}
	src := newSource(t)
	switch op.Strategy {
	case "", strategyOverwrite, strategyMerge, strategyExtract:
	default:
		return fmt.Errorf("strategy %q is none of Overwrite, Merge, Extract", op.Strategy)
	}
	if !strings.ContainsAny(pattern, globChars) {
		return st.copyOne(op, src, path.Clean(cmp.Or(pattern, ".")), dest, strings.HasSuffix(op.To, "/"))
	}
	glob := src.glob
	if op.Strategy == strategyExtract {
		glob = src.globDeep // source-watcher globs tarballs with doublestar
	}
	matches, err := glob(pattern)
	if err != nil {
		return fmt.Errorf("pattern %q: %w", pattern, err)
	}
	if len(matches) == 0 {
		if op.Optional {
			return nil
		}
		return fmt.Errorf("no file matches %q in source %q", pattern, alias)
	}
	base := selectionRoot(pattern)
	matches = slices.DeleteFunc(matches, func(m string) bool { return excluded(m, base, op.Exclude) })
	if len(matches) == 0 {
		return fmt.Errorf("every file matching %q in source %q is excluded", pattern, alias)
	}
	for _, m := range matches {
		if op.Strategy == strategyExtract {
			if tarball(m) && !src.isDir(m) {
				if err := st.extract(src.files[m], dest); err != nil {
					return err
				}
			}
			continue
		}
		to := path.Join(dest, m)
		if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
			if rel, ok := strings.CutPrefix(m, prefix+"/"); ok {
				to = path.Join(dest, rel)
			}
		}
		if err := st.copyMatch(op, src, m, to, base); err != nil {
			return err
		}
	}
	return nil
}

// copyOne copies a from without glob characters: a file or a folder.
func (st *staging) copyOne(op copyOp, src *source, p, dest string, toDir bool) error {
	f, isFile := src.files[p]
	if !isFile && !src.isDir(p) {
		if op.Optional {
			return nil
		}
		return fmt.Errorf("%s is not in the source", p)
	}
	if !isFile {
		if op.Strategy == strategyExtract {
			return fmt.Errorf("%s is a folder: the Extract strategy takes tarballs", p)
		}
		name := path.Base(p)
		if p == "." {
			name = ""
		}
		return st.copyDir(src, p, path.Join(dest, name), p, op.Exclude)
	}
	if excluded(p, ".", op.Exclude) {
		return nil
	}
	if op.Strategy == strategyExtract {
		if !tarball(p) {
			return fmt.Errorf("%s is not a tarball (.tar.gz, .tgz): the Extract strategy takes tarballs", p)
		}
		return st.extract(f, dest)
	}
	if toDir || st.isDir(dest) {
		dest = path.Join(dest, path.Base(p))
	}
	return st.put(dest, f, op.Strategy == strategyMerge)
}

// copyMatch copies a glob's match: a file (merged with Merge) or a folder.
func (st *staging) copyMatch(op copyOp, src *source, m, dest, base string) error {
	if f, ok := src.files[m]; ok {
		return st.put(dest, f, op.Strategy == strategyMerge)
	}
	return st.copyDir(src, m, dest, base, op.Exclude)
}

// copyDir copies the folder dir of src to dest, leaving out the files and
// folders below dir that exclude matches (from base).
func (st *staging) copyDir(src *source, dir, dest, base string, exclude []string) error {
	if err := st.mkdirAll(dest); err != nil {
		return err
	}
	skipped := map[string]bool{} // folders below dir excluded, with all below them
next:
	for _, p := range src.under(dir) {
		rel, _ := below(p, dir)
		elems := strings.Split(rel, "/")
		for i := 1; i < len(elems); i++ {
			sub := path.Join(dir, strings.Join(elems[:i], "/"))
			if skipped[sub] {
				continue next
			}
			if excluded(sub, base, exclude) {
				skipped[sub] = true
				continue next
			}
			if err := st.mkdirAll(path.Join(dest, strings.Join(elems[:i], "/"))); err != nil {
				return err
			}
		}
		if excluded(p, base, exclude) {
			continue
		}
		if err := st.put(path.Join(dest, rel), src.files[p], false); err != nil {
			return err
		}
	}
	return nil
}

// extract writes the files of the tarball f into the folder dest.
func (st *staging) extract(f fileSrc, dest string) error {
	if !f.plain() {
		return errors.New("a tarball made by another copy cannot be extracted offline")
	}
	names, err := tarFiles(f.path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", f.path, err)
	}
	if err := st.mkdirAll(dest); err != nil {
		return err
	}
	for _, n := range names {
		if err := st.put(path.Join(dest, n), fileSrc{path: f.path, entry: n}, false); err != nil {
			return err
		}
	}
	return nil
}

// selectionRoot is the part of a glob pattern before its first element
// with glob characters ("." when the first has them).
func selectionRoot(pattern string) string {
	var root []string
	for _, e := range strings.Split(path.Clean(pattern), "/") {
		if strings.ContainsAny(e, globChars) {
			break
		}
		root = append(root, e)
	}
	if len(root) == 0 {
		return "."
	}
	return path.Join(root...)
}

// excluded reports whether an exclude pattern matches p, a path from the
// source's root, or p from base (the copy's selection root).
func excluded(p, base string, patterns []string) bool {
	if matchesAny(p, patterns) {
		return true
	}
	rel, ok := below(p, base)
	if !ok || rel == "." || rel == p {
		return false
	}
	return matchesAny(rel, patterns)
}

func matchesAny(p string, patterns []string) bool {
	for _, x := range patterns {
		if doublestar.MatchUnvalidated(x, p) {
			return true
		}
		if !strings.Contains(x, "/") && doublestar.MatchUnvalidated(x, path.Base(p)) {
			return true
		}
	}
	return false
}

// tarball reports whether p names a tarball the Extract strategy unpacks.
func tarball(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".tar.gz") || strings.HasSuffix(l, ".tgz")
}

// tarFiles lists the regular files of a gzipped tarball, by their cleaned
// names.
func tarFiles(p string) ([]string, error) {
	tr, f, err := openTarball(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if name := entryName(h); h.Typeflag == tar.TypeReg && name != "" {
			out = append(out, name)
		}
	}
}

// layOut writes the artifact t into the empty folder dir: a symbolic link
// to each file on disk, merged YAML as a file, and the files of tarballs
// unpacked into side (a folder of its own) and linked.
func layOut(t tree, dir, side string) error {
	unpacked := map[string]string{} // tarball → where it is unpacked
	for _, p := range slices.Sorted(maps.Keys(t)) {
		f := t[p]
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		switch {
		case f.merge != nil:
			data, err := mergedYAML(f)
			if err != nil {
				return fmt.Errorf("merging %s: %w", p, err)
			}
			if err := os.WriteFile(abs, data, 0o644); err != nil {
				return err
			}
		case f.entry != "":
			to, ok := unpacked[f.path]
			if !ok {
				to = filepath.Join(side, fmt.Sprint(len(unpacked)))
				if err := untar(f.path, to); err != nil {
					return fmt.Errorf("unpacking %s: %w", f.path, err)
				}
				unpacked[f.path] = to
			}
			if err := os.Symlink(filepath.Join(to, filepath.FromSlash(f.entry)), abs); err != nil {
				return err
			}
		default:
			if err := os.Symlink(f.path, abs); err != nil {
				return err
			}
		}
	}
	return nil
}

func untar(tarball, dir string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	return pkgtar.Untar(f, dir)
}

// mergedYAML is the file source-watcher writes when it merges YAML files
// (strategy Merge): the documents of each file merged into one map, then
// the files merged in order, nested maps key by key and every other value
// (lists too) replaced, as Helm merges values files.
func mergedYAML(f fileSrc) ([]byte, error) {
	m, err := loadMerged(f)
	if err != nil {
		return nil, err
	}
	return sigyaml.Marshal(m)
}

func loadMerged(f fileSrc) (map[string]any, error) {
	if f.merge != nil {
		out := map[string]any{}
		for _, part := range f.merge {
			m, err := loadMerged(part)
			if err != nil {
				return nil, err
			}
			out = overlay(out, m)
		}
		return out, nil
	}
	data, err := readFileSrc(f)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		if err := sigyaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		out = overlay(out, m)
	}
}

// overlay returns base with top's keys laid over it: maps merged key by
// key, any other value replaced.
func overlay(base, top map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(top))
	maps.Copy(out, base)
	for k, v := range top {
		if tm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = overlay(bm, tm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// readFileSrc reads a file on disk, or a file of a tarball.
func readFileSrc(f fileSrc) ([]byte, error) {
	if f.entry == "" {
		return os.ReadFile(f.path)
	}
	tr, file, err := openTarball(f.path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", f.entry, f.path, err)
		}
		if entryName(h) == f.entry {
			return io.ReadAll(tr)
		}
	}
}

// openTarball opens the gzipped tarball at p; the caller closes the file.
func openTarball(p string) (*tar.Reader, *os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return tar.NewReader(gz), f, nil
}

// entryName is a tarball entry's name cleaned, slash-separated, without a
// leading "/" ("" for the root).
func entryName(h *tar.Header) string {
	return strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(h.Name)), "/")
}
