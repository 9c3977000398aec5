package fluxrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/resource"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/internal/stackpath"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/substitute"
)

// FileError is a problem at one line of a file: the type every fluxpack
// package returns.
type FileError = errdefs.FileError

// ErrInvalidOption is wrapped by the error of an option given a value it
// cannot use.
var ErrInvalidOption = errdefs.ErrInvalidOption

// DefaultNamespace is the namespace of the Flux objects flux bootstrap
// makes, and of a Plan read from a repository.
const DefaultNamespace = "flux-system"

// DefaultSource is the source flux bootstrap makes for the repository it
// bootstraps from: GitRepository/flux-system/flux-system.
func DefaultSource() SourceRef {
	return SourceRef{Kind: sourcev1.GitRepositoryKind, Namespace: DefaultNamespace, Name: DefaultNamespace}
}

// SourceRef names a Flux source: KIND/NAMESPACE/NAME.
type SourceRef struct {
	Kind      string
	Namespace string
	Name      string
}

func (r SourceRef) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// ParseSourceRef reads KIND/NAMESPACE/NAME, as --source takes it.
func ParseSourceRef(s string) (SourceRef, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || slices.Contains(parts, "") {
		return SourceRef{}, errdefs.InvalidOption("source %q: want KIND/NAMESPACE/NAME, such as GitRepository/flux-system/flux-system", s)
	}
	return SourceRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
}

// Repository is a cluster's Flux tree, read from its entry point.
type Repository struct {
	// Root is the repository's directory: where the sources that are the
	// repository itself start.
	Root string
	// Entry is the entry point, relative to Root (slash-separated).
	Entry string
	// Plan holds one layer per Flux Kustomization of the tree, the first
	// the root one that applies the entry point (flux bootstrap's
	// flux-system, or one made up for the entry when the tree has none),
	// each with its objects already built. Files are relative to Root.
	Plan *layering.Plan
	// Notes are the problems of the tree that are not any one layer's:
	// a Kustomization two parents apply (they fight over it), a
	// Kustomization spec its parent's variables break, an
	// ArtifactGenerator that cannot be read. Each has the file and line
	// of the object concerned; Lint reports them with its findings.
	Notes []Note
	// Inputs are where each layer of Plan was read from, in its order:
	// its source (or why it cannot be read offline) and the objects built
	// from it, for package lint.
	Inputs []fluxbuild.Input
	// Views are what each layer of Plan is built from, in its order, seen
	// from the repository: which of its files the layer's source holds,
	// and where. nil for a layer whose source is not available.
	Views []*View

	// RootInferred is true when Root was found, not given (no WithRoot).
	RootInferred bool
	// NoCrossNamespaceRefs is true when the tree's FluxInstance runs the
	// controllers multitenant (--no-cross-namespace-refs).
	NoCrossNamespaceRefs bool

	stackFile string // WithStackFile

	temps   []string
	built   map[string]fluxbuild.Source                       // layer → where it was built from
	sources func(*kustomizev1.Kustomization) []runtime.Object // the tree's ConfigMaps and Secrets a Kustomization's substituteFrom names
	srcDirs map[SourceRef]string                              // every source mapped to a directory (WithSource, DefaultSource)
}

// Option configures Read. Only this package implements it.
type Option interface{ applyToRead(*config) error }

type config struct {
	log      *slog.Logger // for what is left out as Flux leaves it out, or nil
	root     string
	sources  map[SourceRef]string
	external []layering.ObjectRef
	fetcher  SourceFetcher                      // WithSourceFetcher
	reuse    *Repository                        // WithReuse
	changed  map[string]bool                    // WithReuse: layers whose inputs changed
	needs    func(apiVersion, kind string) bool // WithIdentityOnly
	// instance is the FluxInstance found outside the entry point that
	// syncs it (instanceSyncFor), read as if the entry held it.
	instance *instanceSync
	// stackFile is where Import's stack will be written (WithStackFile).
	stackFile string
}

type funcOption func(*config) error

func (f funcOption) applyToRead(c *config) error { return f(c) }

// WithRoot says where the repository starts (default: the nearest
// directory above the entry point that holds .git, or the entry point's
// own directory).
func WithRoot(dir string) Option {
	return funcOption(errdefs.NonEmpty("WithRoot", "directory", dir, func(c *config) *string { return &c.root }))
}

// WithStackFile says where Import's stack file will be written. When it
// is inside the repository, the paths of the layers that read the
// repository's own source are written relative to the file's folder, as
// render reads them, so the stack renders where it is written (Flux, which
// reads them from the repository's root, resolves the leading ../ there).
// Without it, or outside the repository (a Difference says so), the paths
// are relative to the repository's root. Read ignores it.
func WithStackFile(path string) Option {
	return funcOption(errdefs.NonEmpty("WithStackFile", "path", path, func(c *config) *string { return &c.stackFile }))
}

// WithSource maps a Flux source to a local directory: the files of its
// artifact. DefaultSource maps to the repository's root unless this says
// otherwise; other sources found in the tree are not available offline
// unless mapped.
func WithSource(ref SourceRef, dir string) Option {
	return funcOption(func(c *config) error {
		if ref.Kind == "" || ref.Namespace == "" || ref.Name == "" || dir == "" {
			return errdefs.InvalidOption("WithSource %s=%s: kind, namespace, name and directory are required", ref, dir)
		}
		c.sources[ref] = dir
		return nil
	})
}

// WithLogger logs, as warnings, what Read leaves out of the tree because
// Flux leaves it out too (symbolic links a source does not hold), and each
// of the repository's Notes as it is found.
func WithLogger(l *slog.Logger) Option {
	return funcOption(errdefs.NonNil("WithLogger", "logger", l, func(c *config) **slog.Logger { return &c.log }))
}

// WithExternal declares objects made outside the repository (the
// ConfigMap of cluster variables Terraform writes, say): lint asks no layer
// to create them.
func WithExternal(refs ...layering.ObjectRef) Option {
	return funcOption(func(c *config) error {
		for _, r := range refs {
			if r.Kind == "" || r.Name == "" {
				return errdefs.InvalidOption("external object %s: kind and name are required", r)
			}
		}
		c.external = append(c.external, refs...)
		return nil
	})
}

// Read reads the Flux tree of a cluster from entry: a folder (or file) that
// kustomize-controller applies for the cluster, typically clusters/<name>.
// It builds the entry as kustomize-controller builds a path (package
// fluxbuild: a kustomization.yaml generated where there is none,
// .sourceignore honoured), collects the Flux Kustomizations it yields, and
// follows each one's spec.path in its source, recursively, until the whole
// tree is known:
//
//   - a GitRepository or OCIRepository that is the repository itself
//     (DefaultSource, or one given with WithSource) maps to its directory;
//   - an ExternalArtifact made by an ArtifactGenerator of the tree maps
//     through the generator's copy rules;
//   - any other source is not available offline: its layers say so
//     (Layer.Unavailable), and their objects are unknown, not empty.
//
// An entry point holding a flux-operator FluxInstance whose spec.sync.path
// is another folder (the instance's own, which a bootstrap step applies)
// is read as the tree the instance syncs: its root layer is the
// Kustomization the instance makes, built from spec.sync.path where the
// repository holds it; where it does not, that layer names what the
// instance syncs (Layer.Unavailable). So is an entry point that a
// FluxInstance elsewhere in the repository syncs (one the flux-instance
// chart makes from a values file or a HelmRelease's values, or a
// FluxInstance a bootstrap step applies) from the source the entry
// point's Kustomizations read, when the tree defines that source nowhere
// (a sync named other than flux-system, spec.sync.name): the source is
// the repository, and the root layer the instance's Kustomization.
//
// A Kustomization's spec is substituted with its parent's postBuild
// variables where their values are known (inline, or ConfigMaps and
// Secrets of the tree), as kustomize-controller substitutes the objects it
// applies. Cycles and unknown dependencies are graph findings of lint,
// not errors; errors are for an entry point that cannot be read.
func Read(ctx context.Context, entry string, opts ...Option) (*Repository, error) {
	cfg := &config{sources: map[SourceRef]string{}}
	if err := errdefs.ApplyOptions(cfg, opts, Option.applyToRead, "nil Option"); err != nil {
		return nil, err
	}
	absEntry, err := filepath.Abs(entry)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(absEntry)
	if err != nil {
		return nil, fmt.Errorf("reading the entry point %s: %w", entry, err)
	}
	root := cfg.root
	if root == "" {
		root = repositoryRoot(absEntry, fi.IsDir())
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, absEntry)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, fmt.Errorf("reading the entry point %s: it is not inside the repository %s", entry, root)
	}
	if _, ok := cfg.sources[DefaultSource()]; !ok {
		cfg.sources[DefaultSource()] = root
	}
	for ref, dir := range cfg.sources {
		if cfg.sources[ref], err = filepath.Abs(dir); err != nil {
			return nil, err
		}
	}
	r := &reader{ctx: ctx, cfg: cfg, root: root, byName: map[string]int{}, generators: map[string]*generator{}, snap: fluxbuild.NewSnapshot()}
	repo := &Repository{Root: root, Entry: filepath.ToSlash(rel), RootInferred: cfg.root == ""}
	if err := r.readEntry(absEntry, filepath.ToSlash(rel), fi.IsDir()); err != nil {
		return nil, err
	}
	r.expand()
	repo.Plan = &layering.Plan{Name: path.Base(repo.Entry), Namespace: DefaultNamespace, External: cfg.external}
	for _, l := range r.layers {
		repo.Plan.Layers = append(repo.Plan.Layers, l.Layer)
		repo.Inputs = append(repo.Inputs, l.Input)
		repo.Views = append(repo.Views, l.view)
	}
	if repo.Entry == "." {
		repo.Plan.Name = filepath.Base(root)
	}
	repo.Notes, repo.NoCrossNamespaceRefs = r.notes, r.multitenant
	repo.stackFile = cfg.stackFile
	repo.temps, repo.built = r.temps, r.built
	if s := r.selfSync(repo.Entry); s != nil {
		// A FluxInstance elsewhere in the repository syncs the entry
		// point from a source of its own name: read again with it.
		if cfg.log != nil {
			cfg.log.Debug("reading the entry point as the FluxInstance that syncs it does", "instance", errdefs.Place(s.object.File, s.object.Line), "source", s.source.String())
		}
		if err := repo.Close(); err != nil {
			return nil, err
		}
		return Read(ctx, entry, append(slices.Clone(opts), withInstance(s))...)
	}
	repo.sources = r.sourcesFor
	repo.srcDirs = cfg.sources
	return repo, nil
}

// Close removes the directories Read laid ExternalArtifacts out in.
func (repo *Repository) Close() error {
	var errs []error
	for _, d := range repo.temps {
		errs = append(errs, os.RemoveAll(d))
	}
	repo.temps = nil
	return errors.Join(errs...)
}

// Root returns the directory Read takes as the repository's root for the
// entry point, without WithRoot: the nearest directory above it holding
// .git; without one (a tree copied or unpacked without its history), the
// directory a Kustomization of the entry point names as the entry's own
// path (flux bootstrap's flux-system, spec.path ./clusters/NAME, found in
// clusters/NAME); else the entry point's directory.
func Root(entry string) (string, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	return repositoryRoot(abs, fi.IsDir()), nil
}

// repositoryRoot is the nearest directory above the entry point that holds
// .git, or the entry point's directory.
func repositoryRoot(entry string, isDir bool) string {
	start := entry
	if !isDir {
		start = filepath.Dir(entry)
	}
	if root, ok := stackpath.Root(start); ok {
		return root
	}
	if root, ok := selfRoot(start); ok {
		return root
	}
	return start
}

// selfRoot finds, in the YAML files of dir and its subfolders (two levels,
// as flux bootstrap lays out clusters/NAME/flux-system), a Flux
// Kustomization whose spec.path is dir itself seen from some folder above
// it, and returns that folder: the root the Kustomization's source starts
// at.
func selfRoot(dir string) (string, bool) {
	var found string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || found != "" {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= 2 || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 1<<20 {
			return nil //nolint:nilerr // an unreadable file names no root
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		for {
			var k struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
				Spec       struct {
					Path string `yaml:"path"`
				} `yaml:"spec"`
			}
			if dec.Decode(&k) != nil {
				return nil
			}
			if k.Kind != kustomizev1.KustomizationKind || !strings.HasPrefix(k.APIVersion, kustomizev1.GroupVersion.Group+"/") {
				continue
			}
			own := filepath.FromSlash(path.Clean(strings.TrimPrefix(k.Spec.Path, "./")))
			if own == "." || !filepath.IsLocal(own) {
				continue
			}
			if root, ok := strings.CutSuffix(dir, string(filepath.Separator)+own); ok && root != "" {
				found = root
				return filepath.SkipAll
			}
		}
	})
	return found, found != ""
}

// layer is a layer of the tree, where lint reads it, and what it sees.
type layer struct {
	layering.Layer
	fluxbuild.Input
	view *View
}

// reader collects the layers of a tree.
type reader struct {
	ctx    context.Context
	cfg    *config
	root   string
	layers []layer
	byName map[string]int // layer name → index
	queue  []int          // layers whose Kustomizations are still to follow
	notes  []Note
	// multitenant is true once a FluxInstance with spec.cluster.multitenant is read.
	multitenant bool

	generators map[string]*generator // ExternalArtifact ns/name → what makes it
	// snap is what the read's builds learn of the disk: the layers share
	// components, folders and .sourceignore files, asked once.
	snap       *fluxbuild.Snapshot
	temps      []string      // laid-out artifacts, removed by Close
	instance   *instanceSync // the FluxInstance the entry point holds (or cfg.instance), if any
	built      map[string]fluxbuild.Source
	sourceObjs []*fluxbuild.Object // ConfigMaps and Secrets of the tree, for substitution
	decodeMu   sync.Mutex
	decoded    map[*fluxbuild.Object]runtime.Object // those of them decoded
	srcObjs    map[SourceRef]*fluxbuild.Object      // the GitRepositories and OCIRepositories of the tree
	fetchedSrc map[SourceRef]fetched
	artifacts  map[SourceRef]artifactOrWhy // the sources' artifacts, as Flux makes them (artifactOf)
	specs      map[SourceRef]sourceSpec    // what the sources' specs say of their files
	composites map[SourceRef]*laidOut      // GitRepositories with includes, laid out
}

// note records a problem of the tree at the object o, and logs it.
func (r *reader) note(kind NoteKind, o *fluxbuild.Object, format string, args ...any) {
	f := Note{Kind: kind, Object: o.String(), File: o.File, Line: o.Line, Message: fmt.Sprintf(format, args...)}
	r.notes = append(r.notes, f)
	if r.cfg.log != nil {
		r.cfg.log.Warn(f.String())
	}
}

// buildOptions are the options of every build of the tree.
func (r *reader) buildOptions() []fluxbuild.Option {
	opts := []fluxbuild.Option{fluxbuild.WithSnapshot(r.snap)}
	if r.cfg.log != nil {
		opts = append(opts, fluxbuild.WithLogger(r.cfg.log))
	}
	if needs := r.cfg.needs; needs != nil {
		opts = append(opts, fluxbuild.WithIdentityOnly(func(apiVersion, kind string) bool {
			return readsContent(apiVersion, kind) || needs(apiVersion, kind)
		}))
	}
	return opts
}

// readEntry builds the entry point as the root layer: the tree's own
// Kustomization for it (flux bootstrap's flux-system applies the cluster's
// folder), or one made up when there is none.
func (r *reader) readEntry(abs, rel string, isDir bool) error {
	src := fluxbuild.Source{Dir: r.root, Packed: DefaultSource().Kind == sourcev1.GitRepositoryKind}
	var objs []*fluxbuild.Object
	var err error
	ks := &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace, Namespace: DefaultNamespace},
		Spec: kustomizev1.KustomizationSpec{
			Path:      "./" + strings.TrimPrefix(rel, "./"),
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: DefaultSource().Kind, Name: DefaultSource().Name},
		},
	}
	if rel == "." {
		ks.Spec.Path = "./"
	}
	if isDir {
		objs, err = fluxbuild.Build(r.ctx, src, ks, r.buildOptions()...)
	} else {
		objs, err = fluxbuild.ReadFile(abs, rel)
	}
	if err != nil {
		return fmt.Errorf("reading the entry point %s: %w", rel, err)
	}
	objs = r.withGenerated(objs)
	r.collect(objs)
	// The tree's own Kustomization of the entry point is the root layer.
	root := layer{Layer: layering.Layer{Name: DefaultNamespace, Kustomization: ks, File: rel}, Input: fluxbuild.Input{Source: &src, Built: true, Objects: objs}, view: identityView(r.root, src, []SourceRef{DefaultSource()})}
	switch k, s := r.applyInstance(objs, rel); {
	case k != nil:
		// flux-operator's FluxInstance makes it from spec.sync.
		root.Kustomization, root.File, root.Line = k, s.object.File, s.object.Line
		root.Name = r.layerName(k)
		r.add(root, "")
		return nil
	case s != nil && s.path != "" && cleanPath(s.path) != cleanPath(rel):
		// The instance's own folder: the tree is where it syncs.
		r.syncedTree(s)
		return nil
	}
	for _, o := range objs {
		k, ok := asKustomization(o)
		if !ok {
			continue
		}
		ref := sourceOf(k)
		if r.selfApplied(ref, k, rel) {
			// The entry point applies itself through a GitRepository it
			// defines, as flux bootstrap's gotk-sync.yaml does under
			// another name: that GitRepository is the repository.
			r.cfg.sources[ref] = r.root
		}
		if dir, mapped := r.cfg.sources[ref]; mapped && dir == r.root && cleanPath(k.Spec.Path) == cleanPath(rel) {
			root.Kustomization, root.File, root.Line = k, o.File, o.Line
			root.Name = r.layerName(k)
			r.add(root, "")
			return nil
		}
	}
	// No Kustomization applies the entry point from the root. One named as
	// the made-up root would be, applying another path, is the entry's own
	// with the root mistaken (a tree without .git) or a path gone stale:
	// say so once, rather than report two Kustomizations of one name.
	for _, o := range objs {
		if k, ok := asKustomization(o); ok && k.Name == DefaultNamespace && namespaceOr(k.Namespace, DefaultNamespace) == DefaultNamespace {
			r.note(NotePath, o, "spec.path %q is not the entry point %q seen from the repository's root %s, so Flux does not apply this folder: give the root with --root, or correct spec.path", k.Spec.Path, ks.Spec.Path, r.root)
			root.Kustomization, root.File, root.Line = k, o.File, o.Line
			break
		}
	}
	r.add(root, "")
	return nil
}

func cleanPath(p string) string { return path.Clean("./" + strings.TrimPrefix(p, "./")) }

// withGenerated adds to a layer's objects those its ResourceSets make
// (flux-operator applies them once the ResourceSet is applied), so that
// the Kustomizations and HelmReleases they generate are read like any
// other; a ResourceSet whose templates do not render is a note.
func (r *reader) withGenerated(objs []*fluxbuild.Object) []*fluxbuild.Object {
	gen, err := expandResourceSets(objs)
	if err != nil {
		for _, o := range objs {
			if o.Kind == "ResourceSet" && o.Group() == fluxInstanceGroup {
				r.note(NoteSource, o, "its templates do not render as flux-operator renders them: %v", err)
				break
			}
		}
	}
	return append(objs, gen...)
}

// add records a layer and queues it for its Kustomizations.
func (r *reader) add(l layer, parent string) {
	l.Parent = parent
	if _, dup := r.byName[l.Name]; !dup {
		r.byName[l.Name] = len(r.layers)
	}
	r.layers = append(r.layers, l)
	r.queue = append(r.queue, len(r.layers)-1)
}

// expand follows the Kustomizations of every queued layer, breadth first;
// a layer whose source is an ExternalArtifact not known yet waits until
// the rest of the tree is read.
func (r *reader) expand() {
	var waiting []pending
	for {
		for len(r.queue) > 0 {
			i := r.queue[0]
			r.queue = r.queue[1:]
			parent := r.layers[i]
			var batch []pending
			// nil: not a Kustomization. Decoded on every core: a home-ops
			// cluster's apps layer applies a hundred or more.
			kss := make([]*kustomizev1.Kustomization, len(parent.Objects))
			parallel.For(len(parent.Objects), func(j int) {
				if k, ok := asKustomization(parent.Objects[j]); ok {
					kss[j] = k
				}
			})
			subst := r.substituteAll(parent.Kustomization, parent.Objects, kss)
			for j, o := range parent.Objects {
				k := kss[j]
				if k == nil {
					continue
				}
				// As applied: ${APP}-db under two apps is two layers.
				ks := k
				var substErr error
				if subst != nil {
					if sub := subst[j]; sub.err != nil {
						substErr = sub.err
					} else if sub.ks != nil {
						ks = sub.ks
					}
				}
				name := r.layerName(ks)
				if j, dup := r.byName[name]; dup {
					if first := r.layers[j]; first.File != o.File || first.Line != o.Line {
						// Another object with the same name: a graph
						// finding of lint (not followed again).
						r.layers = append(r.layers, layer{Layer: layering.Layer{Name: first.Name, Kustomization: ks, File: o.File, Line: o.Line, Parent: parent.Name, DependsOn: r.dependsOn(ks)}})
					} else if first.Parent != parent.Name && j != i {
						r.note(NoteGraph, o, "%s is applied by two Kustomizations, %s and %s: they fight over it", kustomizationRef(ks), first.Parent, parent.Name)
					}
					continue
				}
				if slices.ContainsFunc(batch, func(p pending) bool { return r.layerName(p.ks) == name }) {
					r.layers = append(r.layers, layer{Layer: layering.Layer{Name: name, Kustomization: ks, File: o.File, Line: o.Line, Parent: parent.Name, DependsOn: r.dependsOn(ks)}})
					continue
				}
				if substErr != nil {
					r.note(NoteVariables, o, "%s: substituting its parent's variables: %v", kustomizationRef(k), substErr)
				}
				batch = append(batch, pending{ks: ks, obj: o, parent: parent.Name})
			}
			waiting = append(waiting, r.place(batch, false)...)
		}
		n := len(waiting)
		waiting = r.place(waiting, false)
		if len(waiting) == n {
			break
		}
	}
	r.place(waiting, true)
	if len(r.queue) > 0 {
		r.expand()
	}
}

// pending is a Kustomization found in a layer, not yet a layer itself.
type pending struct {
	ks     *kustomizev1.Kustomization
	obj    *fluxbuild.Object
	parent string
}

// place makes layers of ps whose source is known, building them on every
// core, and returns the others; with last, it makes them all, the others'
// sources unavailable.
func (r *reader) place(ps []pending, last bool) []pending {
	type placed struct {
		l      layer
		res    resolved
		objs   []*fluxbuild.Object
		err    error
		reused bool // objs are WithReuse's
	}
	var todo []*placed
	var rest []pending
	for _, p := range ps {
		if _, ok := r.byName[r.layerName(p.ks)]; ok {
			continue
		}
		l := layer{Layer: layering.Layer{
			Name: r.layerName(p.ks), Kustomization: p.ks, File: p.obj.File, Line: p.obj.Line,
			DependsOn: r.dependsOn(p.ks), Parent: p.parent,
		}}
		res, why, ready := r.resolve(p.ks)
		switch {
		case res.src != nil:
			pl := &placed{l: l, res: res}
			if objs, ok := r.reusable(l.Name, p.ks, res.src, res.gen); ok {
				pl.objs, pl.reused = objs, true
			}
			todo = append(todo, pl)
		case !ready && !last:
			rest = append(rest, p)
		default:
			l.Unavailable = why // lint reports it, once
			l.view = res.view   // an artifact that could not be made: what it is made from
			todo = append(todo, &placed{l: l})
		}
	}
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, t := range todo {
		if t.res.src == nil || t.reused {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t.objs, t.err = fluxbuild.Build(r.ctx, *t.res.src, t.l.Kustomization, r.buildOptions()...)
		})
	}
	wg.Wait()
	for _, t := range todo {
		l := t.l
		if src := t.res.src; src != nil {
			l.Source, l.view = src, t.res.view
			if r.built == nil {
				r.built = map[string]fluxbuild.Source{}
			}
			r.built[l.Name] = *src
			if v := t.res.view; t.err != nil && v.files != nil {
				// The artifact's folder changes from one Read to the
				// next: its files are named by those they are made of,
				// the folder in messages by the source.
				name := sourceOf(l.Kustomization).String()
				var fe *FileError
				if errors.As(t.err, &fe) {
					if rel, e := filepath.Rel(v.Dir, fe.Path); e == nil && filepath.IsLocal(rel) {
						if origins := v.files[filepath.ToSlash(rel)].origins(); origins[len(origins)-1] != "" {
							fe.Path = origins[len(origins)-1]
						}
					}
					fe.Err = &laidOutError{err: fe.Err, dir: v.Dir, name: name}
				}
				t.err = &laidOutError{err: t.err, dir: v.Dir, name: name}
			}
			if t.res.gen != nil {
				// Name the files of a laid-out artifact by the repository's.
				v := t.res.view
				for _, o := range t.objs {
					o.File = v.name(o.File)
				}
				l.Source = &fluxbuild.Source{Dir: r.root}
			}
			if t.err == nil && !t.reused {
				t.objs = r.withGenerated(t.objs)
			}
			l.Built, l.Objects, l.BuildErr = true, t.objs, t.err
			if t.err == nil {
				r.collect(t.objs)
			}
		}
		if _, ok := r.byName[l.Name]; ok {
			continue // a later duplicate: the first one stays
		}
		r.add(l, l.Parent)
	}
	return rest
}

// resolved is where a layer is built from.
type resolved struct {
	src  *fluxbuild.Source
	view *View
	gen  *generator // an ExternalArtifact's: its files are named by the repository's
}

// resolve finds where a Kustomization's source is: its directory, or why
// it is not available (ready is false when the tree may still tell).
func (r *reader) resolve(k *kustomizev1.Kustomization) (res resolved, why string, ready bool) {
	ref := sourceOf(k)
	if strings.Contains(k.Spec.Path, "${") {
		return res, fmt.Sprintf("spec.path %q holds a variable whose value is not known offline", k.Spec.Path), true
	}
	_, mapped := r.cfg.sources[ref]
	if !mapped && r.sameRepository(ref) {
		r.cfg.sources[ref], mapped = r.root, true
	}
	switch {
	case mapped || r.cfg.fetcher != nil && fetchable(ref):
		if _, defined := r.srcObjs[ref]; !mapped && !defined {
			return res, fmt.Sprintf("%s is defined nowhere in the tree: there is nothing to fetch", ref), false
		}
		spec := r.sourceSpec(ref)
		refs, dirs := r.shapers(ref)
		if len(spec.include) > 0 {
			// Its artifact holds other GitRepositories' files: laid out.
			laid, why := r.composite(ref)
			if laid == nil {
				return resolved{view: failedView(r.root, dirs, refs)}, why, true
			}
			return resolved{src: &fluxbuild.Source{Dir: laid.dir}, view: laidView(r.root, laid, false, dirs, refs)}, "", true
		}
		dir, why := r.sourceDir(ref)
		if dir == "" {
			return res, why, true
		}
		src := &fluxbuild.Source{Dir: dir, Ignore: spec.ignore, Packed: ref.Kind == sourcev1.GitRepositoryKind}
		return resolved{src: src, view: identityView(r.root, *src, refs)}, "", true
	case ref.Kind == "ExternalArtifact":
		g, ok := r.generators[ref.Namespace+"/"+ref.Name]
		if !ok {
			return res, fmt.Sprintf("%s is made by no ArtifactGenerator of the tree: not available offline", ref), false
		}
		refs, dirs := r.shapers(ref)
		laid, err := r.materialize(g)
		if err != nil {
			return resolved{view: failedView(r.root, dirs, refs)}, fmt.Sprintf("%s (ArtifactGenerator at %s:%d): %v", ref, g.file, g.line, err), true
		}
		return resolved{src: &fluxbuild.Source{Dir: laid.dir}, view: laidView(r.root, laid, true, dirs, refs), gen: g}, "", true
	}
	return res, fmt.Sprintf("%s is another source than the repository: not available offline (fetch it with --sources online, or map it to a directory with --source %s=DIR)", ref, ref), true
}

// composite lays out, once, the artifact of a GitRepository with
// spec.include.
func (r *reader) composite(ref SourceRef) (*laidOut, string) {
	if laid, ok := r.composites[ref]; ok {
		return laid, ""
	}
	t, why := r.artifactOf(ref, 0)
	if t == nil {
		return nil, why
	}
	laid, err := r.layOut(t)
	if err != nil {
		return nil, fmt.Sprintf("%s: laying out its artifact: %v", ref, err)
	}
	if r.composites == nil {
		r.composites = map[SourceRef]*laidOut{}
	}
	r.composites[ref] = laid
	return laid, ""
}

// collect remembers what later layers need of a layer's objects: the
// sources and generators the tree defines, its ConfigMaps and Secrets.
func (r *reader) collect(objs []*fluxbuild.Object) {
	for _, o := range objs {
		if (o.Kind == sourcev1.GitRepositoryKind || o.Kind == sourcev1.OCIRepositoryKind) && o.Group() == sourcev1.GroupVersion.Group {
			if r.srcObjs == nil {
				r.srcObjs = map[SourceRef]*fluxbuild.Object{}
			}
			ref := SourceRef{Kind: o.Kind, Namespace: namespaceOr(o.Namespace, DefaultNamespace), Name: o.Name}
			if _, dup := r.srcObjs[ref]; !dup {
				r.srcObjs[ref] = o
			}
		}
		switch {
		case o.Kind == "ArtifactGenerator" && o.Group() == "source.extensions.fluxcd.io":
			r.addGenerator(o)
		case (o.Kind == "ConfigMap" || o.Kind == "Secret") && o.APIVersion == "v1":
			r.sourceObjs = append(r.sourceObjs, o) // decoded when needed
		}
	}
}

func namespaceOr(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}

// layerName names a Kustomization's layer: its name in the Plan's
// namespace, namespace/name elsewhere.
func (r *reader) layerName(k *kustomizev1.Kustomization) string {
	ns := namespaceOr(k.Namespace, DefaultNamespace)
	if ns == DefaultNamespace {
		return k.Name
	}
	return ns + "/" + k.Name
}

func (r *reader) dependsOn(k *kustomizev1.Kustomization) []string {
	var out []string
	for _, d := range k.Spec.DependsOn {
		dep := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: namespaceOr(d.Namespace, namespaceOr(k.Namespace, DefaultNamespace))}}
		out = append(out, r.layerName(dep))
	}
	return out
}

func kustomizationRef(k *kustomizev1.Kustomization) string {
	return "Kustomization/" + namespaceOr(k.Namespace, DefaultNamespace) + "/" + k.Name
}

// sourceOf is a Kustomization's sourceRef, its namespace defaulted.
func sourceOf(k *kustomizev1.Kustomization) SourceRef {
	s := k.Spec.SourceRef
	return SourceRef{Kind: s.Kind, Namespace: namespaceOr(s.Namespace, namespaceOr(k.Namespace, DefaultNamespace)), Name: s.Name}
}

// asKustomization decodes a Flux Kustomization object.
func asKustomization(o *fluxbuild.Object) (*kustomizev1.Kustomization, bool) {
	if o.Kind != kustomizev1.KustomizationKind || o.Group() != kustomizev1.GroupVersion.Group {
		return nil, false
	}
	k := &kustomizev1.Kustomization{}
	if err := decodeNode(o.Node, k); err != nil {
		return nil, false
	}
	if k.Namespace == "" {
		k.Namespace = DefaultNamespace
	}
	return k, true
}

// decodeNode decodes a YAML node into a Kubernetes Go type, through JSON
// as the API machinery does (from the node's values, without writing and
// parsing YAML again).
func decodeNode(n *yaml.Node, into any) error {
	j, err := yamlutil.JSON(n)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, into)
}

// sourcesFor decodes the ConfigMaps and Secrets collected so far that
// ks's spec.postBuild.substituteFrom may name (the same kind and name):
// all its substitution reads, without decoding every one of the tree.
func (r *reader) sourcesFor(ks *kustomizev1.Kustomization) []runtime.Object {
	if ks == nil || ks.Spec.PostBuild == nil || len(ks.Spec.PostBuild.SubstituteFrom) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, ref := range ks.Spec.PostBuild.SubstituteFrom {
		want[ref.Kind+"/"+ref.Name] = true
	}
	r.decodeMu.Lock()
	defer r.decodeMu.Unlock()
	if r.decoded == nil {
		r.decoded = map[*fluxbuild.Object]runtime.Object{}
	}
	var out []runtime.Object
	for _, o := range r.sourceObjs {
		if !want[o.Kind+"/"+o.Name] {
			continue
		}
		d, ok := r.decoded[o]
		if !ok {
			d = decodeSource(o)
			r.decoded[o] = d
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

func decodeSource(o *fluxbuild.Object) runtime.Object {
	var obj runtime.Object = &corev1.ConfigMap{}
	if o.Kind == "Secret" {
		obj = &corev1.Secret{}
	}
	if err := decodeNode(o.Node, obj); err != nil {
		return nil
	}
	return obj
}

// substituted is a Kustomization object with its parent's postBuild
// applied: ks nil when it stays as written, err a problem to note.
type substituted struct {
	ks  *kustomizev1.Kustomization
	err error
}

// substituteAll applies the parent's postBuild to the Kustomization
// objects it applies, as kustomize-controller does, when every variable an
// object uses has a known value (inline, or from the ConfigMaps and
// Secrets of the tree); otherwise the object stays as written but for its
// name and namespace, when those use only variables the postBuild sets
// inline (namedAsApplied): the names the platform's layers get, so that
// ${APP}-db applied by two apps is two layers, not one applied twice. kss
// are objs decoded (nil where not a Kustomization); the result is aligned
// with objs, or nil when nothing is substituted. One Substituter serves
// the parent's objects, substituted on every core: a home-ops cluster's
// apps Kustomization applies a hundred or more, each naming ${APP}.
func (r *reader) substituteAll(parent *kustomizev1.Kustomization, objs []*fluxbuild.Object, kss []*kustomizev1.Kustomization) []substituted {
	if parent == nil || parent.Spec.PostBuild == nil {
		return nil
	}
	var todo []int
	for i, o := range objs {
		if kss[i] != nil && o.Dollar {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	out := make([]substituted, len(objs))
	named := func() []substituted {
		for _, i := range todo {
			if out[i].ks == nil && out[i].err == nil {
				out[i].ks = namedAsApplied(kss[i], parent.Spec.PostBuild)
			}
		}
		return out
	}
	src, err := substitute.NewSources(r.sourcesFor(parent)...)
	if err != nil {
		return named()
	}
	s, err := substitute.NewSubstituter(parent, substitute.WithSources(src))
	if err != nil {
		return named()
	}
	if idle, err := s.Idle(); idle && err == nil {
		return nil // Flux substitutes nothing: every object stays as written
	} else if idle && (errors.Is(err, substitute.ErrVarNotSet) || errors.Is(err, substitute.ErrSourceNotFound)) {
		return named() // the objects stay as written, unread, but for their names
	}
	key, err := s.Key()
	if err != nil {
		key = "" // not reached (Idle has loaded the variables): substituted, not kept
	}
	parallel.For(len(todo), func(i int) { out[todo[i]] = substitutedMemo.get(s, key, objs[todo[i]]) })
	return named()
}

// namedAsApplied returns a copy of k with the name and namespace Flux
// applies it with under pb (substitute.Applied of its inline variables),
// or nil when they are as written or cannot be told.
func namedAsApplied(k *kustomizev1.Kustomization, pb *kustomizev1.PostBuild) *kustomizev1.Kustomization {
	if k.Labels[substitute.DisabledKey] == "disabled" || k.Annotations[substitute.DisabledKey] == "disabled" {
		return nil // Flux leaves it as written
	}
	all := len(pb.SubstituteFrom) == 0
	name, ok := substitute.Applied(k.Name, pb.Substitute, all)
	ns, nsOK := substitute.Applied(k.Namespace, pb.Substitute, all)
	if !ok || !nsOK || name == "" || ns == "" || name == k.Name && ns == k.Namespace {
		return nil
	}
	c := k.DeepCopy()
	c.Name, c.Namespace = name, ns
	return c
}

// substituteOne is substituteAll for one object: the Kustomization
// kustomize-controller applies, read from the JSON its substitution leaves
// (Substituter.JSON, which only reads the object's nodes).
func substituteOne(s *substitute.Substituter, o *fluxbuild.Object) substituted {
	j, _, err := s.JSON(&resource.Resource{RNode: *kyaml.NewRNode(o.Node)})
	if err != nil {
		if !errors.Is(err, substitute.ErrVarNotSet) && !errors.Is(err, substitute.ErrSourceNotFound) {
			return substituted{err: err}
		}
		return substituted{}
	}
	out := &kustomizev1.Kustomization{}
	if json.Unmarshal(j, out) != nil {
		return substituted{}
	}
	if out.Namespace == "" {
		out.Namespace = DefaultNamespace
	}
	return substituted{ks: out}
}
