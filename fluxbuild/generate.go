package fluxbuild

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// generated is the kustomization Flux builds for a directory: the one the
// directory holds, or the one Flux's generator writes when there is none,
// with the Kustomization's fields written into it.
type generated struct {
	root  string // the source's directory, absolute
	dir   string // spec.path under it, absolute
	kus   kustypes.Kustomization
	kfile string // where it sits (or would sit) in dir
	found bool   // dir has a kustomization file of its own
	// files are the YAML files a generated kustomization lists, in its
	// order, each parsed; dirs is true when it lists a sub-directory too.
	files   []*file
	dirs    bool
	subdirs map[string]bool // the directories it lists, absolute
	// plain: generated from files only, with nothing for kustomize to
	// transform, so the build is the files' objects in order.
	plain bool
	// keepData keeps the files' bytes after parsing (for a preview).
	keepData bool
	// skipped are the symbolic links left out, as Flux leaves them out.
	skipped []skippedLink
	// needs, when set, reads the files' objects whose kinds it says need
	// no more for their identity only (WithIdentityOnly). When kustomize
	// builds the directory after all, those nodes only say which object
	// is on which line; the objects are kustomize's.
	needs func(apiVersion, kind string) bool
	// log, when set, gets kustomize's warnings (deprecated are those of
	// the kustomizations of this build) at debug level.
	log        *slog.Logger
	deprecated []deprecation
	cache      *buildCache // kustomize's builds, kept (WithCache), or nil
	snap       *Snapshot   // what the disk answered before (WithSnapshot), or nil
	// cancelled reports whether the build's ctx is done: a build whose
	// caller stopped waiting for it is not kept.
	cancelled func() bool
	rec       *recordFS // the disk, recording what kustomize reads for the cache, or nil
	// trackOrigins makes kustomize ask for origin annotations even where
	// the order of the objects tells where each comes from (for tests that
	// hold the two together).
	trackOrigins bool
}

// skippedLink is a symbolic link the generator left out, and why.
type skippedLink struct {
	rel string // slash-separated, relative to the source's directory
	why string
}

// file is one manifest file the generator found and parsed.
type file struct {
	abs    string
	rel    string // slash-separated, relative to the source's directory
	data   []byte // kept for a preview only, which may hand it to kustomize whole
	dollar bool   // data has a $
	nodes  []*yaml.Node
	// partial are the nodes read for their object's identity only.
	partial map[*yaml.Node]bool
	err     error
}

// generate does what fluxcd/pkg/kustomize's Generator does for `flux
// build` (ignore filters on): it finds dir's kustomization file or, without
// one, lists every .yaml/.yml file kustomize can read and every
// sub-directory holding a kustomization file (not descended into), leaves
// out what the .sourceignore files (and ignore, the source's own rules)
// match, and writes spec.targetNamespace, namePrefix, nameSuffix, patches,
// components, images and buildMetadata into the kustomization.
//
// With needs set, objects are read as WithIdentityOnly says.
func generate(root, dir string, ks *kustomizev1.Kustomization, src Source, keepData bool, needs func(apiVersion, kind string) bool, snap *Snapshot) (*generated, error) {
	g := &generated{root: root, dir: dir, keepData: keepData, needs: needs, snap: snap}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	domain := strings.Split(dir, string(filepath.Separator))
	patterns, err := g.ignorePatterns(src.Ignore)
	if err != nil {
		return nil, fmt.Errorf("loading ignore patterns: %w", err)
	}
	if k := kustomizationIn(dir, entries); k != "" {
		data, err := inputfile.ReadManifest(k)
		if err != nil {
			return nil, err
		}
		g.kus.TypeMeta = kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}
		if err := sigyaml.Unmarshal(data, &g.kus); err != nil {
			return nil, &FileError{Path: g.relSlash(k), Line: yamlutil.ErrorLineIn(data, err), Err: fmt.Errorf("reading kustomization: %w", yamlutil.WithoutLine(err))}
		}
		g.kfile, g.found = k, true
		for _, e := range slices.Concat(g.kus.Resources, g.kus.Components, g.kus.Bases) { //nolint:staticcheck // Bases still builds
			if looksRemote(e) {
				return nil, fmt.Errorf("%s: resource %q: %w", g.relSlash(k), e, ErrRemote)
			}
		}
		if len(g.kus.Resources) == 0 {
			// What Flux does to avoid "kustomization.yaml is empty".
			g.kus.BuildMetadata = []string{kustypes.OriginAnnotations}
		}
	} else {
		g.kfile = filepath.Join(dir, konfig.DefaultKustomizationFileName())
		g.kus.TypeMeta = kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}
		if patterns, err = g.scan(dir, entries, patterns, domain, src.Packed); err != nil {
			return nil, err
		}
		if len(g.kus.Resources) == 0 {
			g.kus.Namespace = "_placeholder" // as Flux does, to build an empty directory
		}
	}
	if err := g.filterIgnored(patterns, domain); err != nil {
		return nil, err
	}
	if err := g.setSpec(ks); err != nil {
		return nil, err
	}
	k := &g.kus
	g.plain = !g.found && !g.dirs && (k.Namespace == "" || len(k.Resources) == 0) && k.NamePrefix == "" && k.NameSuffix == "" &&
		len(k.Patches) == 0 && len(k.Components) == 0 && len(k.Images) == 0 && len(k.BuildMetadata) == 0 && len(k.Crds) == 0
	return g, nil
}

// ignorePatterns returns the source's own rules and those of the
// .sourceignore files from the source's root down to dir; scan adds those
// of the directories below as it enters them. The order is
// sourceignore.LoadIgnorePatterns' for the directories on the way.
func (g *generated) ignorePatterns(ignore string) ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	if ignore != "" {
		ps = sourceignore.ReadPatterns(strings.NewReader(ignore), strings.Split(g.root, string(filepath.Separator)))
	}
	rel, err := filepath.Rel(g.root, g.dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		rel = "."
	}
	d := g.root
	if rel == "." {
		d = g.dir
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 0; ; i++ {
		more, err := g.snap.readIgnoreFile(d)
		if err != nil {
			return nil, err
		}
		ps = append(ps, more...)
		if rel == "." || i >= len(parts) {
			return ps, nil
		}
		d = filepath.Join(d, parts[i])
	}
}

// scan lists what Flux's generator lists for dir, whose sorted entries are
// given (a lexical walk, as filepath.Walk makes it: symbolic links to
// directories are not followed), and parses the files on every core. The
// first bad file in walk order is the error, as for Flux's generator,
// which stops there.
func (g *generated) scan(dir string, entries []fs.DirEntry, patterns []gitignore.Pattern, domain []string, packed bool) ([]gitignore.Pattern, error) {
	var matcher gitignore.Matcher
	var walk func(dir string, entries []fs.DirEntry) error
	walk = func(dir string, entries []fs.DirEntry) error {
		if dir != g.dir && slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == sourceignore.IgnoreFile }) {
			more, err := g.snap.readIgnoreFile(dir)
			if err != nil {
				return err
			}
			if len(more) > 0 {
				patterns, matcher = append(patterns, more...), nil
			}
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				sub, err := os.ReadDir(p)
				if err != nil {
					return err
				}
				if kustomizationIn(p, sub) != "" {
					g.kus.Resources = append(g.kus.Resources, "."+strings.TrimPrefix(p, g.dir))
					if g.subdirs == nil {
						g.subdirs = map[string]bool{}
					}
					g.subdirs[p], g.dirs = true, true
					continue
				}
				if err := walk(p, sub); err != nil {
					return err
				}
				continue
			}
			if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
				continue
			}
			if e.Type()&fs.ModeSymlink != 0 && g.skipLink(p, packed) {
				continue
			}
			if len(patterns) > 0 || packed && mayMatchDefaults(strings.TrimPrefix(p, g.dir)) {
				if matcher == nil {
					matcher = sourceignore.NewDefaultMatcher(patterns, domain)
				}
				if matcher.Match(strings.Split(p, string(filepath.Separator)), false) {
					continue
				}
			}
			g.files = append(g.files, &file{abs: p, rel: g.relSlash(p)})
			g.kus.Resources = append(g.kus.Resources, "."+strings.TrimPrefix(p, g.dir))
		}
		return nil
	}
	if err := walk(dir, entries); err != nil {
		return nil, err
	}
	parallel.For(len(g.files), func(i int) {
		f := g.files[i]
		if f.data, f.err = inputfile.ReadManifest(f.abs); f.err == nil {
			f.nodes, f.partial, f.err = readManifestsFor(f.rel, f.data, g.needs)
			f.dollar = bytes.IndexByte(f.data, '$') >= 0
			if !g.keepData && (f.err == nil || !mayInflate(f.data)) {
				f.data = nil
			}
		}
	})
	for _, f := range g.files {
		if f.err != nil {
			return nil, f.err
		}
	}
	return patterns, nil
}

// skipLink reports whether the symbolic link p is left out of the build,
// and records why: source-controller packs regular files only, so a packed
// source has no links at all; in another source (a tree fluxpack pushes,
// which follows links) a link whose target does not exist is left out, as
// push leaves it out.
func (g *generated) skipLink(p string, packed bool) bool {
	why := ""
	if packed {
		why = "skipping a symlink: source-controller leaves symlinks out of the artifact it packs"
	} else if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		why = "skipping a symlink whose target does not exist, as Flux leaves it out"
	}
	if why == "" {
		return false
	}
	g.skipped = append(g.skipped, skippedLink{rel: g.relSlash(p), why: why})
	return true
}

// kustomizationIn returns the kustomization file of dir, whose entries
// (sorted) are given, or "": the first of kustomize's recognized names
// that is not a directory, following symbolic links as kustomize does.
func kustomizationIn(dir string, entries []fs.DirEntry) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		i, found := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
		if !found {
			continue
		}
		p := filepath.Join(dir, name)
		if entries[i].Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil || fi.IsDir() {
				continue
			}
		} else if entries[i].IsDir() {
			continue
		}
		return p
	}
	return ""
}

// filterIgnored drops the resources, components and crds that the ignore
// rules match, as Flux does; a missing local entry is an error. The
// entries of a generated kustomization are known to exist, and whether
// each is a directory. Without patterns of the source's own (own), only
// source-controller's defaults apply, and they can only match a path
// that mayMatchDefaults; the matcher (which parses the defaults) is made
// only for an entry it may match.
func (g *generated) filterIgnored(patterns []gitignore.Pattern, domain []string) error {
	own := len(patterns) > 0
	var m gitignore.Matcher
	ignored := map[string]bool{}
	defer func() {
		if len(ignored) > 0 {
			g.files = slices.DeleteFunc(g.files, func(f *file) bool { return ignored[f.abs] })
		}
	}()
	for _, s := range []struct {
		list *[]string
		urls bool
	}{{&g.kus.Resources, true}, {&g.kus.Components, true}, {&g.kus.Crds, false}} {
		kept := (*s.list)[:0]
		for _, e := range *s.list {
			if !s.urls || !isURL(e) {
				p := filepath.Join(g.dir, e)
				isDir, err := g.isDir(p, s.list == &g.kus.Resources)
				if err != nil {
					// Flux's generator fails here too, without naming the
					// kustomization that lists the entry.
					return &FileError{Path: g.relSlash(g.kfile), Err: fmt.Errorf("resource %q: %w", e, err)}
				}
				if !own && !mayMatchDefaults(e) {
					kept = append(kept, e)
					continue
				}
				if m == nil {
					m = sourceignore.NewDefaultMatcher(patterns, domain)
				}
				if m.Match(strings.Split(p, string(filepath.Separator)), isDir) {
					ignored[p] = true
					continue
				}
			}
			kept = append(kept, e)
		}
		*s.list = kept
	}
	return nil
}

// mayMatchDefaults reports whether sourceignore's default patterns (VCS,
// CI and tool files, images, archives) might match the kustomization entry
// e: every one of them names a file or directory that starts with a dot,
// has an extension (images and archives do), or is one of four CI files.
// False means they surely do not, and Flux's matching can be skipped.
func mayMatchDefaults(e string) bool {
	for _, c := range strings.Split(filepath.ToSlash(e), "/") {
		switch {
		case c == "." || c == "..":
		case strings.HasPrefix(c, "."), c == "appveyor.yml", c == "cloudbuild.yaml", c == "codeship-services.yml", c == "codeship-steps.yml":
			return true
		default:
			if ext := filepath.Ext(c); ext != "" && ext != ".yaml" && ext != ".yml" {
				return true
			}
		}
	}
	return false
}

func (g *generated) isDir(p string, resource bool) (bool, error) {
	if !g.found && resource {
		return g.subdirs[p], nil
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// setSpec writes the Kustomization's fields into the kustomization, as
// kustomize-controller's generator does.
func (g *generated) setSpec(ks *kustomizev1.Kustomization) error {
	s := ks.Spec
	if s.TargetNamespace != "" {
		g.kus.Namespace = s.TargetNamespace
	}
	if s.NamePrefix != "" {
		g.kus.NamePrefix = s.NamePrefix
	}
	if s.NameSuffix != "" {
		g.kus.NameSuffix = s.NameSuffix
	}
	for _, p := range s.Patches {
		kp := kustypes.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			kp.Target = &kustypes.Selector{
				ResId:              resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		g.kus.Patches = append(g.kus.Patches, kp)
	}
	for _, c := range s.Components {
		if !localRelative(c) {
			return fmt.Errorf("component path '%s' must be local and relative", c)
		}
		if _, err := os.Stat(filepath.Join(g.dir, c)); err != nil && s.IgnoreMissingComponents {
			continue
		}
		g.kus.Components = append(g.kus.Components, c)
	}
	for _, im := range s.Images {
		i := slices.IndexFunc(g.kus.Images, func(x kustypes.Image) bool { return x.Name == im.Name })
		if i < 0 {
			g.kus.Images = append(g.kus.Images, kustypes.Image{Name: im.Name, NewName: im.NewName, NewTag: im.NewTag, Digest: im.Digest})
			continue
		}
		if im.NewName != "" {
			g.kus.Images[i].NewName = im.NewName
		}
		if im.NewTag != "" || im.Digest != "" {
			g.kus.Images[i].NewTag, g.kus.Images[i].Digest = im.NewTag, im.Digest
		}
	}
	if len(s.BuildMetadata) > 0 {
		g.kus.BuildMetadata = make([]string, len(s.BuildMetadata))
		for i, b := range s.BuildMetadata {
			g.kus.BuildMetadata[i] = string(b)
		}
	}
	return nil
}

func (g *generated) relSlash(p string) string { return relSlash(g.root, p) }

func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

func isURL(s string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && u.Scheme != ""
}

// localRelative is kustomize's test for a local, relative component path.
func localRelative(p string) bool {
	for _, prefix := range []string{"git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/"} {
		if len(prefix) < len(p) && strings.ToLower(p[:len(prefix)]) == prefix {
			return false
		}
	}
	return !filepath.IsAbs(p) && !filepath.IsAbs(strings.TrimPrefix(strings.ToLower(p), "file://"))
}

// Ignored reports whether Build, listing the files of the folder dir of
// src (a Kustomization's spec.path without a kustomization file, and the
// folders below it), leaves the file p out: the .sourceignore files from
// src.Dir down to p's folder, src.Ignore and source-controller's default
// exclusions, matched as the listing matches them. A file not under dir is
// never listed, and not ignored. dir and p are paths under src.Dir.
func Ignored(src Source, dir, p string) (bool, error) {
	if rel, err := filepath.Rel(dir, p); err != nil || !filepath.IsLocal(rel) {
		return false, nil //nolint:nilerr // a file outside dir is not listed
	}
	g := &generated{root: src.Dir, dir: filepath.Dir(p)}
	patterns, err := g.ignorePatterns(src.Ignore)
	if err != nil {
		return false, fmt.Errorf("loading ignore patterns: %w", err)
	}
	m := sourceignore.NewDefaultMatcher(patterns, strings.Split(dir, string(filepath.Separator)))
	return m.Match(strings.Split(p, string(filepath.Separator)), false), nil
}
