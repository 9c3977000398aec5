package fluxrepo

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// A View is what one layer's build sees of the repository: the folder it
// is built from, and which of the repository's files that folder holds,
// where. It is the reader's one model of a source's artifact (artifact.go),
// so that a reader of the tree (package review's map from changed files to
// layers) sees the files Flux would give the layer:
//
//   - a source that is the repository itself (or a folder WithSource maps
//     a source to) holds its files where they are, less those its ignore
//     rules leave out of a folder's listing (Ignored);
//   - an ExternalArtifact holds the files an ArtifactGenerator copies,
//     where its copy rules put them (aliases, globs, to paths, excludes,
//     several sources, later copies over earlier ones, merged YAML,
//     unpacked tarballs), from its sources' artifacts, which their ignore
//     rules have already filtered;
//   - a GitRepository with spec.include holds the included artifacts'
//     files at their toPath, and is packed with its ignore rules after;
//   - an OCIRepository's ignore rules apply only when its layer is
//     extracted (spec.layerSelector.operation extract, the default).
//
// A View is read-only and safe for concurrent use.
type View struct {
	// Dir is the folder the layer is built from (absolute): the
	// repository's root, a folder a source maps to, or the layer's
	// artifact laid out in a folder of its own.
	Dir string

	root    string
	src     fluxbuild.Source // what the build is given: the ignore rules it applies in Dir
	files   tree             // the artifact laid out in Dir; nil when Dir holds the files themselves
	at      map[string][]string
	named   bool        // the layer's objects are named by the repository's files (an ExternalArtifact's)
	rules   []string    // folders (absolute) whose .sourceignore files shape what Dir holds
	sources []SourceRef // the objects whose specs shape what Dir holds
	failed  bool        // the artifact could not be made (Dir is "")

	mu      sync.Mutex
	ignored map[[2]string]bool
}

// identityView is the view of a folder that holds the files themselves.
func identityView(root string, src fluxbuild.Source, sources []SourceRef) *View {
	return &View{Dir: src.Dir, root: root, src: src, rules: []string{src.Dir}, sources: sources}
}

// failedView is the view of an artifact that could not be made: it holds
// nothing, but is made from the folders dirs and the objects sources.
func failedView(root string, dirs []string, sources []SourceRef) *View {
	return &View{root: root, rules: dirs, sources: sources, failed: true}
}

// laidView is the view of an artifact laid out.
func laidView(root string, laid *laidOut, named bool, rules []string, sources []SourceRef) *View {
	v := &View{Dir: laid.dir, root: root, src: fluxbuild.Source{Dir: laid.dir}, files: laid.files, at: map[string][]string{}, named: named, rules: rules, sources: sources}
	for p, f := range laid.files {
		for _, o := range f.origins() {
			if rel, ok := inRoot(root, o); ok && !slices.Contains(v.at[rel], p) {
				v.at[rel] = append(v.at[rel], p)
			}
		}
	}
	for _, ps := range v.at {
		slices.Sort(ps)
	}
	return v
}

// inRoot returns p (absolute) relative to root, when it is under it.
func inRoot(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Paths returns where Dir holds the repository's file (slash-separated,
// relative to the repository's root), as absolute paths: none when the
// layer's source does not hold it (outside the source's folder, left out
// by its ignore rules or by an ArtifactGenerator's copy rules), several
// when copies put it in several places. For a folder that holds the
// files themselves, a file its ignore rules leave out of a listing is
// still there (a kustomization may name it): see Ignored.
func (v *View) Paths(file string) []string {
	if v == nil {
		return nil
	}
	if v.files == nil {
		abs := filepath.Join(v.root, filepath.FromSlash(file))
		if _, ok := inRoot(v.Dir, abs); ok {
			return []string{abs}
		}
		return nil
	}
	var out []string
	for _, p := range v.at[path.Clean(file)] {
		out = append(out, filepath.Join(v.Dir, filepath.FromSlash(p)))
	}
	return out
}

// ObjectFile returns where Dir holds the file an object of the layer
// names (fluxbuild.Input's Objects: relative to the layer's Source.Dir, or,
// for an ExternalArtifact, the repository's file the artifact's file is
// made of), as absolute paths.
func (v *View) ObjectFile(file string) []string {
	if v == nil || file == "" {
		return nil
	}
	if v.named {
		if ps := v.Paths(file); len(ps) > 0 {
			return ps
		}
	}
	return []string{filepath.Join(v.Dir, filepath.FromSlash(file))}
}

// Origins returns the repository's files (slash-separated, relative to
// its root) that the file p of Dir (absolute) is made of: p itself for a
// folder that holds the files themselves, the file copied, or the files
// merged, for an artifact laid out; none for a file from elsewhere.
func (v *View) Origins(p string) []string {
	if v == nil {
		return nil
	}
	rel, ok := inRoot(v.Dir, p)
	if !ok {
		return nil
	}
	if v.files == nil {
		if r, ok := inRoot(v.root, p); ok {
			return []string{r}
		}
		return nil
	}
	var out []string
	for _, o := range v.files[rel].origins() {
		if r, ok := inRoot(v.root, o); ok {
			out = append(out, r)
		}
	}
	return out
}

// Ignored reports whether the build, listing the folder dir (absolute: a
// Kustomization's spec.path without a kustomization file, and the folders
// below it), leaves the file p of Dir out by its ignore rules (.sourceignore
// files, spec.ignore, source-controller's defaults), as fluxbuild.Build
// does (fluxbuild.Ignored). A file a kustomization names is read whatever
// they say.
func (v *View) Ignored(dir, p string) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	key := [2]string{dir, p}
	if got, ok := v.ignored[key]; ok {
		return got
	}
	got, err := fluxbuild.Ignored(v.src, dir, p)
	got = got && err == nil
	if v.ignored == nil {
		v.ignored = map[[2]string]bool{}
	}
	v.ignored[key] = got
	return got
}

// Shapes reports whether a change to the repository's file (relative to
// its root) may change which files the layer's build lists in the folder
// dir (absolute: its spec.path in Dir), beyond that file: a .sourceignore
// file of a folder the layer's source, or one of the sources its artifact
// is made from, packs with its ignore rules, or one the build reads in dir
// or above it.
func (v *View) Shapes(file, dir string) bool {
	if v == nil || path.Base(file) != ".sourceignore" {
		return false
	}
	if v.files != nil && v.MadeFrom(file) {
		return true
	}
	for _, p := range v.Paths(file) {
		at := filepath.Dir(p)
		if _, under := inRoot(dir, at); under || at == dir {
			return true
		}
		if _, above := inRoot(at, dir); above {
			return true
		}
	}
	return false
}

// Failed reports whether the layer's artifact could not be made from the
// repository's files (an ArtifactGenerator's copies or a GitRepository's
// includes fail): the layer is not available, and a change to a file it
// is made from (MadeFrom) may make it so.
func (v *View) Failed() bool { return v != nil && v.failed }

// MadeFrom reports whether the repository's file (relative to its root) is
// under a folder the layer's artifact is made from (a source's folder),
// whether the artifact holds it or not.
func (v *View) MadeFrom(file string) bool {
	if v == nil {
		return false
	}
	abs := filepath.Join(v.root, filepath.FromSlash(file))
	for _, d := range v.rules {
		if _, ok := inRoot(d, abs); ok {
			return true
		}
	}
	return v.files == nil && !v.failed && len(v.Paths(file)) > 0
}

// Sources returns the objects whose specs shape what Dir holds: the
// layer's source, the ArtifactGenerator that makes an ExternalArtifact
// (kind ArtifactGenerator, by its name) and its sources, the
// GitRepositories a GitRepository includes, recursively.
func (v *View) Sources() []SourceRef {
	if v == nil {
		return nil
	}
	return slices.Clone(v.sources)
}

// shapers are the objects whose specs shape the artifact of ref, and the
// folders whose .sourceignore files do.
func (r *reader) shapers(ref SourceRef) (refs []SourceRef, dirs []string) {
	seen := map[SourceRef]bool{}
	var walk func(ref SourceRef)
	walk = func(ref SourceRef) {
		if seen[ref] {
			return
		}
		seen[ref] = true
		refs = append(refs, ref)
		switch ref.Kind {
		case "ExternalArtifact":
			g, ok := r.generators[ref.Namespace+"/"+ref.Name]
			if !ok {
				return
			}
			refs = append(refs, SourceRef{Kind: "ArtifactGenerator", Namespace: g.fromNS, Name: g.from})
			for _, alias := range slices.Sorted(maps.Keys(g.sources)) {
				walk(g.sources[alias])
			}
		case sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind:
			if dir, ok := r.cfg.sources[ref]; ok {
				dirs = append(dirs, dir)
			}
			for _, inc := range r.sourceSpec(ref).include {
				walk(SourceRef{Kind: sourcev1.GitRepositoryKind, Namespace: ref.Namespace, Name: inc.GitRepositoryRef.Name})
			}
		}
	}
	walk(ref)
	return refs, dirs
}

// name names the file p of a laid-out artifact (slash-separated, relative
// to Dir) by the repository's file it is made of (the last, for merged
// files: the one laid over the others), or p itself when it comes from
// elsewhere.
func (v *View) name(p string) string {
	if v.files == nil {
		return p
	}
	origins := v.files[p].origins()
	for i := len(origins) - 1; i >= 0; i-- {
		if rel, ok := inRoot(v.root, origins[i]); ok {
			return rel
		}
	}
	return p
}

// laidOutError is a build error of a layer whose artifact is laid out in a
// folder of the Read's: the folder, which changes from one Read to the
// next, is named by the source whose artifact it is.
type laidOutError struct {
	err       error
	dir, name string
}

func (e *laidOutError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.dir, e.name)
}

func (e *laidOutError) Unwrap() error { return e.err }
