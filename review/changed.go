package review

import (
	"bytes"
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// ChangedFiles compares two trees and returns the files (slash-separated,
// relative to the trees' roots, sorted) that one has and the other lacks,
// or that differ in content or executable bit. .git is left out, and in a
// tree that is (in) a Git working tree, so is what Git ignores there: an
// untracked file that .gitignore, .git/info/exclude or core.excludesFile
// matches (rendered output, an IaC outputs file) and a nested repository.
// A tree in no Git working tree (a revision Extract wrote) is read whole.
func ChangedFiles(base, head string) ([]string, error) {
	files, _, err := (&config{baseRoot: base, headRoot: head}).changedFiles()
	return files, err
}

func changedFiles(base, head string, baseRules, headRules *gitRules) ([]string, error) {
	var b, h map[string]treeEntry
	var be, he error
	var wg sync.WaitGroup
	wg.Go(func() { b, be = listTree(base, baseRules) })
	h, he = listTree(head, headRules)
	wg.Wait()
	if err := cmp.Or(be, he); err != nil {
		return nil, err
	}
	return changedPaths(h, b, func(e, o treeEntry) (bool, bool) {
		return o.link != e.link || o.regular != e.regular || o.exec != e.exec || o.size != e.size, e.regular
	}, func(p string) (bool, error) {
		rel := filepath.FromSlash(p)
		eq, err := inputfile.Equal(filepath.Join(base, rel), filepath.Join(head, rel))
		return !eq, err
	})
}

// changedPaths lists, sorted, the paths one side has and the other lacks,
// those differ says differ, and those differ asks to compare whose
// content differs (compared in parallel).
func changedPaths[B any](head map[string]treeEntry, base map[string]B, differ func(treeEntry, B) (differs, compare bool), contentDiffers func(p string) (bool, error)) ([]string, error) {
	var out, same []string // same: files whose content is to compare
	for p, e := range head {
		b, ok := base[p]
		if !ok {
			out = append(out, p)
			continue
		}
		switch d, c := differ(e, b); {
		case d:
			out = append(out, p)
		case c:
			same = append(same, p)
		}
	}
	for p := range base {
		if _, ok := head[p]; !ok {
			out = append(out, p)
		}
	}
	differs := make([]bool, len(same))
	errs := make([]error, len(same))
	parallel.For(len(same), func(i int) { differs[i], errs[i] = contentDiffers(same[i]) })
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, p := range same {
		if differs[i] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// treeEntry is what ChangedFiles compares of a file before its content.
type treeEntry struct {
	regular bool
	exec    bool
	size    int64
	link    string
}

// listTree lists the regular files and links under root, .git left out
// (a folder, or a linked worktree's file), stating each entry from its
// open directory (inputfile.ReadDir). With rules (root is in a Git
// working tree), what Git ignores is left out too.
func listTree(root string, rules *gitRules) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	var walk func(dir, rel string, comps []string, patterns []gitignore.Pattern, inIgnored bool) error
	walk = func(dir, rel string, comps []string, patterns []gitignore.Pattern, inIgnored bool) error {
		entries, err := inputfile.ReadDir(dir, true)
		if err != nil {
			return err
		}
		var matcher gitignore.Matcher
		if rules != nil {
			if rel != "" && slices.ContainsFunc(entries, func(e inputfile.DirEntry) bool { return e.Name == ".git" }) {
				return nil // another repository: Git lists none of its files
			}
			patterns = folder(patterns, dir, comps, slices.ContainsFunc(entries, func(e inputfile.DirEntry) bool {
				return e.Name == ".gitignore" && e.Type.IsRegular()
			}))
			matcher = gitignore.NewMatcher(patterns)
		}
		// The path of each entry from the top, for the matcher.
		entryPath := append(slices.Clip(comps), "")
		for _, e := range entries {
			p, r := filepath.Join(dir, e.Name), path.Join(rel, e.Name)
			if e.Name == ".git" {
				continue // a folder, or the file of a linked worktree or submodule
			}
			ignored := false
			if rules != nil {
				// A tracked path in an ignored folder is listed; what is
				// untracked beside it is not.
				var skip bool
				entryPath[len(comps)] = e.Name
				if ignored, skip = rules.match(matcher, entryPath, e.Type.IsDir(), inIgnored); skip {
					continue
				}
			}
			switch {
			case e.Type.IsDir():
				if err := walk(p, r, append(slices.Clip(comps), e.Name), patterns, ignored); err != nil {
					return err
				}
			case e.Type&fs.ModeSymlink != 0:
				t, err := os.Readlink(p)
				if err != nil {
					return err
				}
				out[r] = treeEntry{link: t}
			case e.Type.IsRegular():
				mode, size := fs.FileMode(e.ID.Mode), e.ID.Size
				if !e.ID.Known() { // a system ReadDir does not stat on
					fi, err := os.Lstat(p)
					if err != nil {
						return err
					}
					mode, size = fi.Mode(), fi.Size()
				}
				out[r] = treeEntry{regular: true, exec: mode&0o111 != 0, size: size}
			}
		}
		return nil
	}
	var comps []string
	var patterns []gitignore.Pattern
	if rules != nil {
		comps, patterns = rules.prefix, rules.patterns
	}
	return out, walk(root, "", comps, patterns, false)
}

// Affected returns the layers of repo (by name) whose render a change to
// the files changed (slash-separated, relative to repo.Root) may change.
// Each layer sees the repository through its source (fluxrepo.View: the
// files an ExternalArtifact's copy rules put where, those a
// GitRepository's include moves in, those ignore rules leave out), and a
// file feeds it when the layer's source holds it:
//
//   - as one of the kustomization files of its spec.path, its
//     spec.components and the folders they name, followed (bases), or as
//     a file they name (resources, patches, generators' files), existing
//     or not: kustomize reads nothing else of a folder with a
//     kustomization file;
//   - below a folder without one (its spec.path, as Flux generates a
//     kustomization for it), except below a sub-folder with one, which
//     the rule above follows, and unless its source's ignore rules leave
//     it out of the folder's listing;
//   - as the file one of its objects comes from;
//
// or when it shapes what the source holds (a .sourceignore file), or when
// it defines an object the layer reads: its own Kustomization, its source
// and what makes that source's artifact (an ArtifactGenerator, the
// GitRepositories it includes or copies from), the ConfigMaps and Secrets
// of its postBuild.substituteFrom, and for the HelmReleases it applies,
// their valuesFrom objects, chart sources and chart folders in the
// repository.
//
// It errs on the side of rendering: a layer it names may render the same,
// a layer it leaves out cannot change.
func Affected(repo *fluxrepo.Repository, changed []string) map[string]bool {
	return affected(repo, changed, &folders{})
}

// affected is Affected with the folders read so far: made from the other
// side's (folders.forSide), or none.
func affected(repo *fluxrepo.Repository, changed []string, refs *folders) map[string]bool {
	out := map[string]bool{}
	if len(changed) == 0 {
		return out
	}
	root := repo.Root
	abs := make([]string, len(changed))
	changedSet := map[string]bool{} // repository files, relative to its root
	for i, c := range changed {
		abs[i] = filepath.Join(root, filepath.FromSlash(c))
		changedSet[path.Clean(c)] = true
	}
	view := func(i int) *fluxrepo.View {
		if i < len(repo.Views) {
			return repo.Views[i]
		}
		return nil
	}
	// Which objects each changed file defines, on this side.
	type objKey struct{ kind, namespace, name string }
	defined := map[objKey]bool{}
	for i, l := range repo.Plan.Layers {
		in := repo.Inputs[i]
		if l.File != "" && changedSet[path.Clean(l.File)] {
			out[l.Name] = true
		}
		if in.Source == nil {
			continue
		}
		v := view(i)
		// Objects come file by file: a file is looked up once.
		var file string
		var changed bool
		for _, o := range in.Objects {
			if o.File != file || file == "" {
				file, changed = o.File, madeOfChanged(v, in.Source.Dir, root, o.File, changedSet)
			}
			if changed {
				ns := o.Namespace
				if ns == "" {
					ns = namespaceOr(l.Kustomization.Spec.TargetNamespace, l.Kustomization.Namespace)
				}
				defined[objKey{o.Kind, ns, o.Name}] = true
				defined[objKey{o.Kind, "", o.Name}] = true
			}
		}
	}
	reads := func(kind, ns, name string) bool {
		return defined[objKey{kind, ns, name}] || ns == "" && defined[objKey{kind, "", name}]
	}
	// Each layer on every core; a folder's kustomization files are read
	// once for all of them.
	hit := make([]bool, len(repo.Plan.Layers))
	parallel.For(len(repo.Plan.Layers), func(i int) {
		l := repo.Plan.Layers[i]
		if out[l.Name] {
			return
		}
		hit[i] = feeds(repo, i, view(i), changed, abs, reads, refs)
	})
	for i, l := range repo.Plan.Layers {
		if hit[i] {
			out[l.Name] = true
		}
	}
	return out
}

// feeds reports whether the changed files (abs: the same, absolute) feed
// the layer repo.Plan.Layers[i], seen through v, as Affected says; reads
// says whether a changed file defines an object.
func feeds(repo *fluxrepo.Repository, i int, v *fluxrepo.View, changed, abs []string, reads func(kind, ns, name string) bool, refs *folders) bool {
	l, in := repo.Plan.Layers[i], repo.Inputs[i]
	ks := l.Kustomization
	ksNS := namespaceOr(ks.Namespace, fluxrepo.DefaultNamespace)
	if ref := ks.Spec.SourceRef; reads(ref.Kind, namespaceOr(ref.Namespace, ksNS), ref.Name) {
		return true
	}
	for _, s := range v.Sources() {
		if reads(s.Kind, s.Namespace, s.Name) {
			return true
		}
	}
	if pb := ks.Spec.PostBuild; pb != nil {
		for _, s := range pb.SubstituteFrom {
			if reads(s.Kind, ksNS, s.Name) {
				return true
			}
		}
	}
	if in.Source == nil && v.Failed() && slices.ContainsFunc(changed, v.MadeFrom) {
		// Its artifact could not be made here: it may be on the
		// other side.
		return true
	}
	if in.Source == nil {
		return false
	}
	if v == nil {
		return true // what it reads is not known: render it
	}
	start := filepath.Join(v.Dir, filepath.FromSlash(ks.Spec.Path))
	dirs, files := inputDirs(v, start, ks.Spec.Components, in.Objects, refs)
	var chartDirs []string // in the repository: a chart's source is read as it is
	for _, o := range in.Objects {
		if o.Kind == "HelmRelease" && o.Node != nil {
			ns := namespaceOr(o.Namespace, namespaceOr(ks.Spec.TargetNamespace, ksNS))
			if releaseReads(o, ns, reads) {
				return true
			}
			if chart := yamlutil.Str(o.Node, "spec", "chart", "spec", "chart"); strings.Contains(chart, "/") {
				dirs = append(dirs, filepath.Join(v.Dir, filepath.FromSlash(chart)))
				chartDirs = append(chartDirs, filepath.Join(repo.Root, filepath.FromSlash(chart)))
			}
		}
	}
	for j, c := range changed {
		if v.Shapes(c, start) || slices.ContainsFunc(chartDirs, func(d string) bool { return abs[j] == d || under(abs[j], d) }) {
			return true
		}
		for _, p := range v.Paths(c) {
			if slices.Contains(files, p) ||
				slices.ContainsFunc(dirs, func(d string) bool { return p == d || generatedReads(d, p, refs) }) && !v.Ignored(start, p) {
				return true
			}
		}
	}
	return false
}

// madeOfChanged reports whether the file an object of a layer names
// (relative to the layer's Source.Dir, or as the View names it) is made
// of a changed file.
func madeOfChanged(v *fluxrepo.View, srcDir, root, file string, changed map[string]bool) bool {
	if v == nil {
		rel, err := filepath.Rel(root, filepath.Join(srcDir, filepath.FromSlash(file)))
		return err == nil && changed[filepath.ToSlash(rel)]
	}
	for _, p := range v.ObjectFile(file) {
		for _, o := range v.Origins(p) {
			if changed[o] {
				return true
			}
		}
	}
	return false
}

// releaseReads reports whether the HelmRelease o (in namespace ns) reads
// an object reads says a changed file defines: a valuesFrom object or its
// chart's source.
func releaseReads(o *fluxbuild.Object, ns string, reads func(kind, ns, name string) bool) bool {
	spec := yamlutil.Field(o.Node, "spec")
	if spec == nil {
		return false
	}
	if vf := yamlutil.Field(spec, "valuesFrom"); vf != nil && vf.Kind == yaml.SequenceNode {
		for _, e := range vf.Content {
			if reads(yamlutil.Str(e, "kind"), ns, yamlutil.Str(e, "name")) {
				return true
			}
		}
	}
	for _, ref := range [][]string{{"chartRef"}, {"chart", "spec", "sourceRef"}} {
		n := spec
		for _, k := range ref {
			n = yamlutil.Field(n, k)
		}
		if n != nil && reads(yamlutil.Str(n, "kind"), namespaceOr(yamlutil.Str(n, "namespace"), ns), yamlutil.Str(n, "name")) {
			return true
		}
	}
	return false
}

// inputDirs returns what a layer's build reads in its View's folder: the
// folders (its path, start, its components, the kustomized folders its
// objects come from, and those the kustomization files there name,
// followed; a folder
// without a kustomization file is read as Flux generates one for it, its
// sub-folders that have one followed as well) and the files (those the
// kustomization files name, whether they exist or not, the kustomization
// files themselves, and the files its objects come from).
func inputDirs(v *fluxrepo.View, start string, components []string, objs []*fluxbuild.Object, refs *folders) (dirs, files []string) {
	seen := map[string]bool{}
	var visit func(d string)
	visit = func(d string) {
		d = filepath.Clean(d)
		if seen[d] {
			return
		}
		seen[d] = true
		dirs = append(dirs, d)
		r := refs.refs(d)
		for _, t := range r.files {
			if !seen[t] {
				seen[t] = true
				files = append(files, t)
			}
		}
		for _, t := range r.dirs {
			visit(t)
		}
		if !r.kustomized {
			for _, t := range refs.below(d) {
				visit(t)
			}
		}
	}
	visit(start)
	for _, c := range components {
		visit(filepath.Join(start, filepath.FromSlash(c)))
	}
	// The files its objects come from: a kustomized folder's are
	// followed; another's are the file itself (a kustomization names
	// it, or it is below a folder read whole, above).
	file := ""
	for _, o := range objs {
		if o.File != "" && o.File != file { // objects come file by file
			file = o.File
			for _, p := range v.ObjectFile(o.File) {
				if d := filepath.Dir(p); refs.refs(d).kustomized {
					visit(d)
				} else if !seen[p] {
					seen[p] = true
					files = append(files, p)
				}
			}
		}
	}
	return dirs, files
}

// generatedReads reports whether a build that reads the folder d reads the
// path p below it through the kustomization Flux generates for a folder
// without one (fluxcd/pkg/kustomize's generator): every file below d,
// except below a sub-folder with a kustomization file, which kustomize
// reads instead and which reads only what it names (inputDirs follows
// those). A folder with a kustomization file reads no path below it
// that it does not name.
func generatedReads(d, p string, refs *folders) bool {
	if !under(p, d) {
		return false
	}
	if r := refs.refs(d); r.kustomized {
		return r.globs
	}
	for q := filepath.Dir(p); q != d && len(q) > len(d); q = filepath.Dir(q) {
		if r := refs.refs(q); r.kustomized {
			return r.globs
		}
	}
	return true
}

// kustomizedBelow returns the sub-folders of d, at any depth, that have a
// kustomization file, not looking below those: the folders Flux's
// generated kustomization for d names as resources.
func kustomizedBelow(d string) []string {
	var out []string
	_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() || p == d {
			return nil
		}
		if e.Name() == ".git" {
			return filepath.SkipDir
		}
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			if fi, err := os.Stat(filepath.Join(p, name)); err == nil && !fi.IsDir() { // a link too, as kustomize reads it
				out = append(out, p)
				return filepath.SkipDir
			}
		}
		return nil
	})
	return out
}

// folderRefs is what the kustomization files of a folder name, in their
// order: the files (the kustomization files first; a name that does not
// exist is kept, as a file) and the folders that exist.
type folderRefs struct {
	files, dirs []string
	kustomized  bool // the folder has a kustomization file
	globs       bool // one of its names holds a glob: read all below it
}

// folders reads each folder's kustomization files once, and walks each
// folder without one once, for every layer, on every core: many layers
// share a folder (a component, the folder of an apps Kustomization).
// Made from the other side's (forSide), it reads only the folders the
// change can make read otherwise.
type folders struct {
	m sync.Map // folder → *folderRead
	// seed is what the other side read of the folders the change cannot
	// make read otherwise, by path from root, its paths from root too.
	root string
	seed map[string]*folderRead
}

type folderRead struct {
	refsOnce, belowOnce sync.Once
	refs                *folderRefs
	below               []string
	walked              bool // below is kustomizedBelow's answer
}

func (fs *folders) get(d string) *folderRead {
	if f, ok := fs.m.Load(d); ok {
		return f.(*folderRead)
	}
	f, _ := fs.m.LoadOrStore(d, &folderRead{})
	return f.(*folderRead)
}

// refs is readFolderRefs(d), read once.
func (fs *folders) refs(d string) *folderRefs {
	f := fs.get(d)
	f.refsOnce.Do(func() {
		if s := fs.seedOf(d); s != nil && s.refs != nil {
			r := *s.refs
			r.files, r.dirs = fs.abs(r.files), fs.abs(r.dirs)
			f.refs = &r
			return
		}
		f.refs = readFolderRefs(d)
	})
	return f.refs
}

// below is kustomizedBelow(d), walked once.
func (fs *folders) below(d string) []string {
	f := fs.get(d)
	f.belowOnce.Do(func() {
		if s := fs.seedOf(d); s != nil && s.walked {
			f.below = fs.abs(s.below)
		} else {
			f.below = kustomizedBelow(d)
		}
		f.walked = true
	})
	return f.below
}

// seedOf returns what the other side read of the folder d, if it can
// stand for this side's.
func (fs *folders) seedOf(d string) *folderRead {
	if fs.seed == nil {
		return nil
	}
	rel, err := filepath.Rel(fs.root, d)
	if err != nil {
		return nil
	}
	return fs.seed[rel]
}

func (fs *folders) abs(rel []string) []string {
	if rel == nil {
		return nil
	}
	out := make([]string, len(rel))
	for i, p := range rel {
		out[i] = filepath.Join(fs.root, p)
	}
	return out
}

// forSide returns the folders of the other side of a comparison, at root,
// made from what fs read at from of the folders the changed files
// (relative to both) cannot make read otherwise: a folder's
// kustomization files when no changed file is in the folder nor at or
// below a path they name (a folder there may be one on one side only),
// the walk of a folder when no changed file is below it. Both sides are
// the same tree but for the changed files.
func (fs *folders) forSide(from, root string, changed []string) *folders {
	abs := make([]string, len(changed))
	for i, c := range changed {
		abs[i] = filepath.Join(from, filepath.FromSlash(c))
	}
	touched := func(p string) bool { // a changed file is p or below it
		return slices.ContainsFunc(abs, func(c string) bool { return c == p || under(c, p) })
	}
	// rels is ps from from, or false when one is outside it or touched.
	rels := func(ps []string) ([]string, bool) {
		out := make([]string, len(ps))
		for i, p := range ps {
			rel, err := filepath.Rel(from, p)
			if err != nil || !filepath.IsLocal(rel) || touched(p) {
				return nil, false
			}
			out[i] = rel
		}
		return out, true
	}
	out := &folders{root: root, seed: map[string]*folderRead{}}
	fs.m.Range(func(k, v any) bool {
		d, f := k.(string), v.(*folderRead)
		rel, err := filepath.Rel(from, d)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return true
		}
		s := &folderRead{}
		if r := f.refs; r != nil && !slices.ContainsFunc(abs, func(c string) bool { return filepath.Dir(c) == d }) {
			files, okF := rels(r.files)
			dirs, okD := rels(r.dirs)
			if okF && okD {
				s.refs = &folderRefs{files: files, dirs: dirs, kustomized: r.kustomized, globs: r.globs}
			}
		}
		if f.walked && !touched(d) {
			s.below, s.walked = rels(f.below)
		}
		out.seed[rel] = s
		return true
	})
	return out
}

// readFolderRefs reads the kustomization files of the folder d for what
// inputDirs follows.
func readFolderRefs(d string) *folderRefs {
	r := &folderRefs{}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		k := filepath.Join(d, name)
		data, err := os.ReadFile(k)
		if err != nil {
			continue
		}
		r.kustomized = true
		r.files = append(r.files, k)
		for _, ref := range namedPaths(data) {
			if strings.Contains(ref, "://") || path.IsAbs(ref) {
				continue
			}
			if strings.ContainsAny(ref, "*?[") {
				r.globs = true
			}
			t := filepath.Join(d, filepath.FromSlash(ref))
			if fi, err := os.Stat(t); err == nil && fi.IsDir() {
				r.dirs = append(r.dirs, filepath.Clean(t))
			} else {
				r.files = append(r.files, t)
			}
		}
	}
	return r
}

// namedPaths returns every string of a kustomization file that may name a
// file or folder (values of any field, and KEY=PATH generator entries; no
// field name is a path).
// Its first document is read as the parser reads it (by hand when it is of
// the plain shape most kustomization files have: yamlutil.DecodePlain).
func namedPaths(data []byte) []string {
	n := yamlutil.DecodePlain(data, 0)
	if n == nil {
		n = new(yaml.Node)
		if yaml.NewDecoder(bytes.NewReader(data)).Decode(n) != nil {
			return nil
		}
	}
	var out []string
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			s := n.Value
			if _, after, ok := strings.Cut(s, "="); ok {
				out = append(out, after)
			}
			if s != "" && !strings.ContainsAny(s, "\n") {
				out = append(out, s)
			}
		case yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				walk(n.Content[i])
			}
		default:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(n)
	return out
}

func under(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

func namespaceOr(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}
