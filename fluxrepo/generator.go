package fluxrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// An ArtifactGenerator (source.extensions.fluxcd.io, Flux ≥ 2.7) makes
// ExternalArtifacts by copying files of its sources:
//
//	spec:
//	  sources: [{alias: repo, kind: GitRepository, name: flux-system}]
//	  artifacts:
//	    - name: apps
//	      copy:
//	        - {from: "@repo/apps/**", to: "@artifact/", exclude: ["*.md"]}
//
// The reader makes the artifact as source-watcher makes it (generate, in
// artifact.go) from its sources' artifacts as source-controller makes
// them, lays it out in a directory of its own (symbolic links to the
// repository's files), builds its Kustomizations from there, and names
// every file by the one it links to.

// generator is what the tree says an ExternalArtifact is made of.
type generator struct {
	namespace, name string // the ExternalArtifact
	fromNS, from    string // the ArtifactGenerator's namespace and name
	file            string // where the generator is declared
	line            int
	sources         map[string]SourceRef // alias → source
	copies          []copyOp

	files tree     // the artifact; nil until it is made
	laid  *laidOut // the artifact, laid out; nil until it is
	err   error
}

// laidOut is an artifact laid out in a directory of its own.
type laidOut struct {
	dir   string
	files tree
}

func (r *reader) addGenerator(o *fluxbuild.Object) {
	var spec struct {
		Spec struct {
			Sources []struct {
				Alias, Kind, Name, Namespace string
			} `json:"sources"`
			Artifacts []struct {
				Name      string   `json:"name"`
				Namespace string   `json:"namespace"`
				Copy      []copyOp `json:"copy"`
			} `json:"artifacts"`
		} `json:"spec"`
	}
	if err := decodeNode(o.Node, &spec); err != nil {
		r.note(NoteSource, o, "%s: %v", o, err)
		return
	}
	ns := namespaceOr(o.Namespace, DefaultNamespace)
	srcs := map[string]SourceRef{}
	for _, s := range spec.Spec.Sources {
		srcs[s.Alias] = SourceRef{Kind: s.Kind, Namespace: namespaceOr(s.Namespace, ns), Name: s.Name}
	}
	for _, a := range spec.Spec.Artifacts {
		ans := namespaceOr(a.Namespace, ns)
		g := &generator{namespace: ans, name: a.Name, fromNS: ns, from: o.Name, file: o.File, line: o.Line, sources: srcs, copies: a.Copy}
		for _, c := range a.Copy {
			// A copy that names no source of spec.sources, or no place
			// in the artifact, fails the generator in Flux too: a broken
			// source, not one lint merely cannot read offline.
			if alias, ok := splitAlias(c.From); !ok || srcs[alias] == (SourceRef{}) {
				r.note(NoteSource, o, "artifact %q: copy from %q names no source of spec.sources (@alias/path): Flux fails the ArtifactGenerator, and ExternalArtifact/%s/%s is never made", a.Name, c.From, ans, a.Name)
			} else if !strings.HasPrefix(c.To, "@artifact/") {
				r.note(NoteSource, o, "artifact %q: copy to %q is not in the artifact (@artifact/path): Flux fails the ArtifactGenerator, and ExternalArtifact/%s/%s is never made", a.Name, c.To, ans, a.Name)
			}
		}
		r.generators[ans+"/"+a.Name] = g
	}
}

// materialize makes and lays out the artifact g makes, once.
func (r *reader) materialize(g *generator) (*laidOut, error) {
	if g.laid != nil {
		return g.laid, nil
	}
	t, err := r.generatedOnce(g, 0)
	if err != nil {
		return nil, err
	}
	if g.laid, err = r.layOut(t); err != nil {
		g.err = err
	}
	return g.laid, err
}

// generatedOnce is the artifact g makes, made once.
func (r *reader) generatedOnce(g *generator, depth int) (tree, error) {
	if g.files == nil && g.err == nil {
		g.files, g.err = r.generated(g, depth)
	}
	return g.files, g.err
}

// generated is the artifact g makes, from its sources' artifacts.
func (r *reader) generated(g *generator, depth int) (tree, error) {
	sources := map[string]tree{}
	for _, c := range g.copies {
		alias, ok := splitAlias(c.From)
		if !ok {
			return nil, fmt.Errorf("copy from %q: want @alias/path", c.From)
		}
		if _, done := sources[alias]; done {
			continue
		}
		ref, ok := g.sources[alias]
		if !ok {
			return nil, fmt.Errorf("copy from %q: no source has alias %q", c.From, alias)
		}
		t, why := r.artifactOf(ref, depth+1)
		if t == nil {
			return nil, fmt.Errorf("copy from %q: %s", c.From, why)
		}
		sources[alias] = t
	}
	return generate(g.copies, sources)
}

// layOut lays the artifact t out in a directory of the Read's.
func (r *reader) layOut(t tree) (*laidOut, error) {
	dir, err := os.MkdirTemp("", "fluxpack-artifact-")
	if err != nil {
		return nil, err
	}
	r.temps = append(r.temps, dir)
	side, err := os.MkdirTemp("", "fluxpack-unpacked-")
	if err != nil {
		return nil, err
	}
	r.temps = append(r.temps, side)
	if err := layOut(t, dir, side); err != nil {
		return nil, err
	}
	return &laidOut{dir: dir, files: t}, nil
}

// artifactOf is the artifact of the source ref as Flux makes it, file by
// file, or nil and why it is not available offline: a GitRepository's or
// OCIRepository's folder (WithSource, DefaultSource, or fetched) packed
// with its ignore rules and includes, an ExternalArtifact of a generator
// of the tree.
func (r *reader) artifactOf(ref SourceRef, depth int) (tree, string) {
	if depth > 8 {
		return nil, fmt.Sprintf("%s: its sources nest too deep", ref)
	}
	if a, ok := r.artifacts[ref]; ok {
		return a.files, a.why
	}
	t, why := r.makeArtifact(ref, depth)
	if r.artifacts == nil {
		r.artifacts = map[SourceRef]artifactOrWhy{}
	}
	r.artifacts[ref] = artifactOrWhy{files: t, why: why}
	return t, why
}

type artifactOrWhy struct {
	files tree
	why   string
}

func (r *reader) makeArtifact(ref SourceRef, depth int) (tree, string) {
	switch ref.Kind {
	case "ExternalArtifact":
		g, ok := r.generators[ref.Namespace+"/"+ref.Name]
		if !ok {
			return nil, fmt.Sprintf("%s is made by no ArtifactGenerator of the tree: not available offline", ref)
		}
		t, err := r.generatedOnce(g, depth)
		if err != nil {
			return nil, fmt.Sprintf("%s (ArtifactGenerator at %s:%d): %v", ref, g.file, g.line, err)
		}
		return t, ""
	case sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind:
		dir, why := r.sourceDir(ref)
		if dir == "" {
			return nil, why
		}
		t, err := readTree(dir)
		if err != nil {
			return nil, fmt.Sprintf("%s: reading %s: %v", ref, dir, err)
		}
		spec := r.sourceSpec(ref)
		if len(spec.include) > 0 {
			if t, why = r.withIncludes(ref, t, spec.include, depth); t == nil {
				return nil, why
			}
		}
		if spec.copyLayer {
			return t, "" // the layer as it is: source-controller does not pack it
		}
		packed, err := pack(t, spec.ignore)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", ref, err)
		}
		return packed, ""
	default:
		return nil, fmt.Sprintf("%s is another source than the repository: not available offline (map it to a directory with --source %s=DIR)", ref, ref)
	}
}

// withIncludes moves the artifacts spec.include names into t, the working
// tree of the GitRepository ref, in order.
func (r *reader) withIncludes(ref SourceRef, t tree, includes []sourcev1.GitRepositoryInclude, depth int) (tree, string) {
	if depth > 4 {
		return nil, fmt.Sprintf("%s: spec.include nests too deep", ref)
	}
	for _, inc := range includes {
		iref := SourceRef{Kind: sourcev1.GitRepositoryKind, Namespace: ref.Namespace, Name: inc.GitRepositoryRef.Name}
		if _, defined := r.srcObjs[iref]; !defined && r.cfg.sources[iref] == "" {
			return nil, fmt.Sprintf("%s includes %s, which the tree does not define", ref, iref)
		}
		it, why := r.artifactOf(iref, depth+1)
		if it == nil {
			return nil, fmt.Sprintf("%s includes %s: %s", ref, iref, why)
		}
		var err error
		if t, err = include(t, it, inc.FromPath, inc.GetToPath()); err != nil {
			return nil, fmt.Sprintf("%s: spec.include of %s from %q to %q: %v", ref, iref, inc.FromPath, inc.GetToPath(), err)
		}
	}
	return t, ""
}

// sourceDir is the folder of a GitRepository or OCIRepository: the one
// WithSource maps it to, or, with a fetcher, the one it is fetched to.
func (r *reader) sourceDir(ref SourceRef) (string, string) {
	if dir, ok := r.cfg.sources[ref]; ok {
		return dir, ""
	}
	if r.cfg.fetcher != nil && fetchable(ref) {
		o, ok := r.srcObjs[ref]
		if !ok {
			return "", fmt.Sprintf("%s is defined nowhere in the tree: there is nothing to fetch", ref)
		}
		f := r.fetch(ref, o)
		return f.dir, f.why
	}
	return "", fmt.Sprintf("%s is another source than the repository: not available offline (fetch it with --sources online, or map it to a directory with --source %s=DIR)", ref, ref)
}

// sourceSpec is what a source's spec says of its artifact's files.
type sourceSpec struct {
	ignore    string                          // spec.ignore, for an artifact source-controller packs
	include   []sourcev1.GitRepositoryInclude // a GitRepository's spec.include
	copyLayer bool                            // an OCIRepository's layer copied as it is (layerSelector.operation copy): no ignore rules
}

func (r *reader) sourceSpec(ref SourceRef) sourceSpec {
	if s, ok := r.specs[ref]; ok {
		return s
	}
	s := r.readSpec(ref)
	if _, known := r.srcObjs[ref]; !known {
		return s // the tree may define it later
	}
	if r.specs == nil {
		r.specs = map[SourceRef]sourceSpec{}
	}
	r.specs[ref] = s
	return s
}

func (r *reader) readSpec(ref SourceRef) sourceSpec {
	o, ok := r.srcObjs[ref]
	if !ok {
		return sourceSpec{}
	}
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		g := &sourcev1.GitRepository{}
		if decodeNode(o.Node, g) != nil {
			return sourceSpec{}
		}
		s := sourceSpec{include: g.Spec.Include}
		if g.Spec.Ignore != nil {
			s.ignore = *g.Spec.Ignore
		}
		return s
	case sourcev1.OCIRepositoryKind:
		oc := &sourcev1.OCIRepository{}
		if decodeNode(o.Node, oc) != nil {
			return sourceSpec{}
		}
		if oc.GetLayerOperation() == sourcev1.OCILayerCopy {
			return sourceSpec{copyLayer: true}
		}
		s := sourceSpec{}
		if oc.Spec.Ignore != nil {
			s.ignore = *oc.Spec.Ignore
		}
		return s
	}
	return sourceSpec{}
}

// splitAlias returns the alias of "@alias/path".
func splitAlias(s string) (alias string, ok bool) {
	s, ok = strings.CutPrefix(s, "@")
	if !ok {
		return "", false
	}
	alias, _, _ = strings.Cut(s, "/")
	return alias, alias != ""
}

func relTo(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}
