package fluxbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/parallel"
)

// FileError is a problem at one line of a file: the type packages
// layering, oci and substitute return too, so one errors.As serves all.
type FileError = errdefs.FileError

// ErrDuplicateID is wrapped by the error about two objects of one build
// that share group, version, kind, namespace and name: kustomize refuses
// them, and so does Flux.
var ErrDuplicateID = errdefs.ErrDuplicateID

// ErrNotDirectory is wrapped by the error about a spec.path that is a file.
var ErrNotDirectory = errors.New("not a directory")

// Source is a source's artifact as kustomize-controller unpacks it: the
// directory a Kustomization's spec.path is relative to.
type Source struct {
	// Dir is the artifact's root, for instance a Git repository's working
	// tree.
	Dir string
	// Ignore holds gitignore patterns, relative to Dir, of files the
	// artifact leaves out (a GitRepository's spec.ignore). The
	// .sourceignore files from Dir down to spec.path and below, and
	// source-controller's default exclusions (.git/, CI files, images,
	// archives), always apply.
	Ignore string
	// Packed says Dir is a working tree that source-controller packs into
	// the artifact (a GitRepository's): its default exclusions leave files
	// out before kustomize-controller sees them, so they are not read at
	// all. Otherwise they are read and then left out, as `flux build` does.
	Packed bool
}

// Build returns the objects kustomize-controller builds for ks from src,
// before postBuild substitution, in the order it applies them: the
// kustomize build of spec.path, with the kustomization.yaml Flux generates
// when there is none and with the Kustomization's targetNamespace,
// namePrefix, nameSuffix, patches, images and components written into it.
//
// A directory without a kustomization file, and a Kustomization without
// those fields, is read without kustomize but as kustomize reads it, which
// is faster, linear in the number of objects, and keeps every object's
// line; TestPlainMatchesKustomize and FuzzPlainMatchesKustomize hold the two
// together. Objects kustomize builds get the file and line kustomize's
// origin annotations name.
//
// Build reads files and never touches the network: a kustomization entry
// that kustomize would fetch is an error wrapping ErrRemote. A problem in a
// file is a *FileError with its line, the file joined with src.Dir;
// Object.File is relative to src.Dir.
func Build(ctx context.Context, src Source, ks *kustomizev1.Kustomization, opts ...Option) ([]*Object, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	b, err := build(ctx, src, ks, false, cfg)
	if err != nil {
		return nil, err
	}
	return b.objects, nil
}

// inSource names a file of an error as the caller reaches it: joined with
// the source's directory as the caller gave it.
func inSource(src Source, err error) error {
	var fe *FileError
	if errors.As(err, &fe) && !filepath.IsAbs(fe.Path) {
		fe.Path = filepath.Join(src.Dir, filepath.FromSlash(fe.Path))
	}
	return err
}

// built is what build made: the objects and, for Preview, kustomize's
// resources of them.
type built struct {
	objects   []*Object
	resources []*resource.Resource
}

// build builds ks from src; with preview, it also returns the resources
// (read under kustomizeMu, shared).
func build(ctx context.Context, src Source, ks *kustomizev1.Kustomization, preview bool, cfg *config) (_ *built, err error) {
	defer func() { err = inSource(src, err) }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(src.Dir)
	if err != nil {
		return nil, err
	}
	p := ks.Spec.Path
	// kustomize-controller joins the path to the artifact with
	// securejoin: a path cannot leave it (../.. is the root itself).
	dir := filepath.Join(root, filepath.FromSlash(path.Clean("/"+p)))
	if p == "" {
		p = src.Dir
	}
	fi, err := os.Stat(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("path %q: %w", p, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("path %q: %w", p, ErrNotDirectory)
	}
	var needs func(apiVersion, kind string) bool
	if !preview {
		needs = cfg.needs
	}
	g, err := generate(root, dir, ks, src, preview, needs, cfg.snapshot)
	if g != nil && cfg.log != nil {
		for _, l := range g.skipped {
			cfg.log.Warn(l.why, "path", filepath.Join(src.Dir, filepath.FromSlash(l.rel)))
		}
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !g.plain {
		g.log, g.cache = cfg.log, cfg.cacheFor(ctx)
		g.cancelled = func() bool { return ctx.Err() != nil }
		ress, objs, err := g.kustomize()
		if err != nil {
			return nil, err
		}
		return &built{objects: objs, resources: ress}, nil
	}
	b := &built{}
	if b.objects, err = g.plainObjects(); err != nil {
		return nil, err
	}
	if preview {
		kustomizeMu.RLock() // kustomize's resource factory, as a build uses it
		b.resources, err = g.plainResources()
		kustomizeMu.RUnlock()
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// plainObjects returns the objects of a plain directory's files, in
// order, made on every core: what kustomize builds from them (duplicate
// ids refused, local configuration dropped).
func (g *generated) plainObjects() ([]*Object, error) {
	per := make([][]*Object, len(g.files))
	errs := make([]error, len(g.files))
	parallel.For(len(g.files), func(i int) {
		f := g.files[i]
		objs := make([]*Object, 0, len(f.nodes))
		for _, n := range f.nodes {
			o, err := newObject(n)
			if err != nil {
				errs[i] = &FileError{Path: f.rel, Line: n.Line, Err: err}
				return
			}
			o.File, o.Line, o.Dollar, o.IdentityOnly = f.rel, n.Line, f.dollar, f.partial[n]
			objs = append(objs, o)
		}
		per[i] = objs
	})
	for _, err := range errs {
		if err != nil {
			return nil, err // the first in file order
		}
	}
	objs := slices.Concat(per...)
	if err := checkUnique(objs); err != nil {
		return nil, err
	}
	// kustomize drops local configuration after it has all objects.
	return slices.DeleteFunc(objs, func(o *Object) bool { return o.local }), nil
}

// plainResources returns kustomize's resources of a plain directory's
// objects, as its resource factory makes them from each file and krusty
// leaves them at the end of a build. A file that kustomize would inflate
// (anchors, merge keys) or whose Lists it would inline goes through the
// factory whole, as kustomize reads it; the others are made from the nodes
// already read.
func (g *generated) plainResources() ([]*resource.Resource, error) {
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	keep := *rf
	keep.IncludeLocalConfigs = true
	per := make([][]*resource.Resource, len(g.files))
	errs := make([]error, len(g.files))
	parallel.For(len(g.files), func(i int) {
		f := g.files[i]
		defer func() {
			if r := recover(); r != nil {
				errs[i] = &FileError{Path: f.rel, Err: fmt.Errorf("kustomize panicked parsing YAML: %v", r)}
			}
		}()
		var ress []*resource.Resource
		var err error
		if mayInflate(f.data) || bytes.Contains(f.data, []byte("List")) {
			ress, err = rf.SliceFromBytes(f.data)
		} else {
			rns := make([]*kyaml.RNode, len(f.nodes))
			for j, n := range f.nodes {
				rns[j] = kyaml.NewRNode(n)
			}
			ress, err = keep.ResourcesFromRNodes(rns)
		}
		if err != nil {
			errs[i] = &FileError{Path: f.rel, Err: err}
			return
		}
		ress = slices.DeleteFunc(ress, isLocal)
		for _, r := range ress {
			if err := cleanAnnotations(r); err != nil {
				errs[i] = &FileError{Path: f.rel, Err: fmt.Errorf("%s/%s: %w", r.GetKind(), r.GetName(), err)}
				return
			}
		}
		per[i] = ress
	})
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return slices.Concat(per...), nil
}

func isLocal(r *resource.Resource) bool {
	v, ok := r.GetAnnotations()["config.kubernetes.io/local-config"]
	return ok && v != "false"
}

// cleanAnnotations is what krusty does to every object at the end of a
// build: it drops kustomize's build, origin and transformer annotations by
// reading the annotations as strings and writing them back, so annotation
// values of another type come out as strings and empty annotations vanish.
// Annotations of a shape kustomize cannot write back make it panic, and
// Flux's build fail; so does this.
func cleanAnnotations(r *resource.Resource) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kustomize panicked rewriting annotations: %v", p)
		}
	}()
	r.RemoveBuildAnnotations()
	if err := r.SetOrigin(nil); err != nil {
		return err
	}
	return r.ClearTransformations()
}

// ReadFile returns the objects of one manifest file as kustomize reads a
// resource file, with their lines (what Build gives for a directory that
// holds only this file); rel names the file in objects and errors.
func ReadFile(path, rel string) ([]*Object, error) {
	data, err := inputfile.ReadManifest(path)
	if err != nil {
		return nil, err
	}
	return readData(path, rel, data)
}

// ReadData is ReadFile of a file's content, data: a manifest made from a
// file (a template rendered, say) rather than the file itself.
func ReadData(data []byte, rel string) ([]*Object, error) {
	return readData(rel, rel, data)
}

func readData(abs, rel string, data []byte) ([]*Object, error) {
	f := &file{abs: abs, rel: rel, data: data, dollar: bytes.IndexByte(data, '$') >= 0}
	var err error
	if f.nodes, err = readManifests(rel, data); err != nil {
		return nil, err
	}
	g := &generated{files: []*file{f}}
	return g.plainObjects()
}
