package fluxbuild

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// ErrRemote is wrapped by the error about a kustomization entry that
// kustomize would fetch from the network (a URL, a git repository): the
// build is offline, so it is refused instead of fetched.
var ErrRemote = errors.New("remote resources are not read: fluxpack builds offline")

// ErrRemoteFile is wrapped, with ErrRemote, by the error about a file a
// kustomization names by an http(s) URL (a generator's source, a patch):
// kustomize's file loader downloads it, in kustomize-controller too, whose
// --no-remote-bases limits the filesystem kustomize reads, not those
// downloads.
var ErrRemoteFile = fmt.Errorf("a file kustomize downloads: %w", ErrRemote)

// kustomizeMu guards kustomize's global state. kustomize keeps the OpenAPI
// schema in globals, which Flux guards by serialising every build
// (kustomize#3659). Only a build that changes the schema (a kustomization
// with openapi or crds fields, reset around the build) or that swaps
// os.Stderr (withStderr) writes global state; the others only read it,
// under kyaml's own schema lock where it is parsed on first use. So those
// share the lock (RLock) and run in parallel, as do previews (whose
// substitution reads the schema), and the writers and post-renderers hold
// it alone.
// TestConcurrentBuilds holds this under the race detector.
var kustomizeMu sync.RWMutex

// originAnnotation is where kustomize records the file an object came from
// when buildMetadata has originAnnotations.
const originAnnotation = "config.kubernetes.io/origin"

// kustomize builds g with kustomize, as kustomize-controller does: the
// kustomization (the directory's own, or the generated one) with the
// Kustomization's fields written over it, plugins off, no load
// restrictions. It returns the resources, and the objects with the file
// and line each came from. The file is known from the order when g lists
// only files and transforms their objects in place (sourceOrder); else
// kustomize's origin annotations name it, which the build asks for and
// removes again unless the kustomization asked for them. It takes
// kustomizeMu for the build: shared unless the build writes kustomize's
// global state.
func (g *generated) kustomize() ([]*resource.Resource, []*Object, error) {
	cached := g.cache.entry(g) // nil without a cache (cache.go)
	if ress, objs, ok := cached.get(); ok {
		return ress, objs, nil
	}
	var local localInfo
	if err := checkLocal(g.root, g.dir, &g.kus, g.kfile, map[string]bool{}, &local); err != nil {
		return nil, nil, err
	}
	schemas := local.schemas
	g.deprecated = local.deprecated
	if g.log != nil {
		for _, d := range local.deprecated {
			g.log.Debug("kustomize: "+strings.TrimPrefix(d.warning, "# "), "kustomization", d.file)
		}
	}
	lines := &lineIndex{root: g.root, files: map[string][]*sourceLine{}}
	for _, f := range g.files {
		lines.add(f)
	}
	asked := slices.Contains(g.kus.BuildMetadata, kustypes.OriginAnnotations)
	var order []sourceObject
	if !asked && !g.trackOrigins {
		order = g.sourceOrder(lines)
	}
	origins := !asked && order == nil
	ress, err := g.build(schemas, origins)
	if err != nil {
		return nil, nil, err
	}
	var from []sourceObject // where each resource comes from, by the order
	if order != nil {
		if from = fromOrder(ress, order, g.kus.NamePrefix, g.kus.NameSuffix); from == nil {
			// Not what the order foretold: ask kustomize where each came from.
			origins = true
			if ress, err = g.build(schemas, origins); err != nil {
				return nil, nil, err
			}
		}
	}
	objs := make([]*Object, 0, len(ress))
	for i, r := range ress {
		var file, configuredIn string
		var origin resource.Origin
		if from == nil {
			origin = originOf(r)
			if origin.Path != "" {
				file = filepath.Join(g.dir, filepath.FromSlash(path.Clean(origin.Path)))
			} else if origin.ConfiguredIn != "" {
				configuredIn = filepath.Join(g.dir, filepath.FromSlash(path.Clean(origin.ConfiguredIn)))
			}
		}
		if origins {
			// What krusty does at the end of a build that keeps no origins.
			if err := r.SetOrigin(nil); err != nil {
				return nil, nil, fmt.Errorf("kustomize build of %s: %s/%s: %w", g.relSlash(g.dir), r.GetKind(), r.GetName(), err)
			}
		}
		o, err := newObject(r.YNode())
		if err != nil {
			return nil, nil, fmt.Errorf("kustomize build of %s: %s/%s: %w", g.relSlash(g.dir), r.GetKind(), r.GetName(), err)
		}
		o.Built, o.Dollar = true, true
		o.File, o.Line = g.relSlash(g.kfile), 0
		switch {
		case from != nil:
			o.File, o.Line = g.relSlash(from[i].file), from[i].line
			file = from[i].file
		case file != "":
			o.File, o.Line = lines.find(file, o)
		case configuredIn != "":
			// Made by a generator (configMapGenerator, say): the
			// kustomization file that declares it, at its entry.
			o.File, o.Line = g.relSlash(configuredIn), generatorLine(configuredIn, origin.ConfiguredBy.Kind, o.Name)
		}
		if file != "" {
			// Its values are in the file; a generator's are in others
			// (a configMapGenerator's files), so its uses stay at Line.
			lines.reline(file, o)
			o.ScalarLines = true
		}
		objs = append(objs, o)
	}
	if g.cancelled == nil || !g.cancelled() {
		cached.put(ress, objs, local.deprecated)
	}
	return ress, objs, nil
}

// build runs kustomize on g's kustomization, with origin annotations when
// origins is set, under kustomizeMu (alone when it writes the schema or
// kustomize warns on os.Stderr).
func (g *generated) build(schemas, origins bool) ([]*resource.Resource, error) {
	k := g.kus
	if origins {
		k.BuildMetadata = append(slices.Clone(k.BuildMetadata), kustypes.OriginAnnotations)
	}
	manifest, err := sigyaml.Marshal(&k)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(g.kfile))
	if err != nil {
		return nil, err
	}
	fsys := &overlayFS{FileSystem: g.disk(), path: filepath.Join(root, filepath.Base(g.kfile)), data: manifest}
	if schemas || len(g.deprecated) > 0 {
		kustomizeMu.Lock()
		defer kustomizeMu.Unlock()
	} else {
		kustomizeMu.RLock()
		defer kustomizeMu.RUnlock()
	}
	var m resmap.ResMap
	if len(g.deprecated) > 0 {
		// kustomize prints a warning about each deprecated field to
		// os.Stderr, with no option to turn it off: it goes to the debug
		// log (kustomize above), not to the user's terminal.
		withStderr(func(printed string) {
			for _, l := range strings.SplitAfter(printed, "\n") {
				if l != "" && !g.isDeprecationWarning(l) {
					fmt.Fprint(os.Stderr, l) // not kustomize's: pass it on
				}
			}
		}, func() { m, err = kustomizeBuild(fsys, root, schemas) })
	} else {
		m, err = kustomizeBuild(fsys, root, schemas)
	}
	if err != nil {
		if dup := g.duplicateFile(err); dup != nil {
			// kustomize's error names neither file, and its last words
			// are about trying the file as a directory.
			err = dup
		}
		return nil, fmt.Errorf("kustomize build of %s: %w", g.relSlash(g.dir), err)
	}
	return m.Resources(), nil
}

// sourceObject is an object of a file kustomize reads, as the file has it.
type sourceObject struct {
	apiVersion, kind, name string
	file                   string // absolute
	line                   int
}

// sourceOrder returns the objects kustomize builds from g, in the order it
// returns them, when that order says which file each comes from, else nil.
// It does for a kustomization whose resources are all files (no
// directories, components, generators or patches: nothing adds, removes or
// reorders objects) and whose other fields rename, label, annotate or
// otherwise change objects in place: kustomize then reads each file in
// turn, transforms every object where it is, and leaves out local
// configuration at the end. Origin annotations would tell the same at
// half again the cost of the build (kustomize writes and rewrites them on
// every object for every transformer); fromOrder checks the build against
// the order, and a build that does not match asks kustomize after all.
// The files are read into lines, which needs them anyway.
func (g *generated) sourceOrder(lines *lineIndex) []sourceObject {
	k := g.kus
	if k.Kind != "" && k.Kind != kustypes.KustomizationKind || g.dirs {
		return nil
	}
	// Every field other than these must be empty.
	rest := k
	rest.TypeMeta, rest.MetaData = kustypes.TypeMeta{}, nil
	rest.Resources, rest.NamePrefix, rest.NameSuffix, rest.Namespace = nil, "", "", ""
	rest.CommonLabels, rest.Labels, rest.CommonAnnotations, rest.Images, rest.Replicas = nil, nil, nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil
	}
	if root, err := filepath.EvalSymlinks(g.dir); err != nil || root != g.dir {
		return nil // kustomize reads relative to where the links lead
	}
	var files []*file
	if g.found {
		for _, e := range k.Resources {
			p := filepath.Join(g.dir, filepath.FromSlash(e))
			if p == g.kfile {
				return nil
			}
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
			f := &file{abs: p, rel: relSlash(g.root, p)}
			data, err := inputfile.ReadManifest(p)
			if err != nil {
				return nil
			}
			if f.nodes, err = readIdentities(f.rel, data); err != nil {
				return nil
			}
			if _, seen := lines.files[p]; !seen {
				lines.add(f)
			}
			files = append(files, f)
		}
	} else {
		files = g.files
	}
	var out []sourceObject
	for _, f := range files {
		for _, n := range f.nodes {
			if localConfig(n) {
				continue
			}
			out = append(out, sourceObject{apiVersion: yamlutil.Str(n, "apiVersion"), kind: yamlutil.Str(n, "kind"), name: yamlutil.Str(n, "metadata", "name"), file: f.abs, line: n.Line})
		}
	}
	if out == nil {
		out = []sourceObject{}
	}
	return out
}

// fromOrder returns the object of order each resource came from (its
// file and line) when the resources are the objects of order one for one,
// with their kind and apiVersion and their name, or the name with the
// prefix and suffix; else nil.
func fromOrder(ress []*resource.Resource, order []sourceObject, prefix, suffix string) []sourceObject {
	if len(ress) != len(order) {
		return nil
	}
	for i, r := range ress {
		s := order[i]
		if name := r.GetName(); r.GetKind() != s.kind || r.GetApiVersion() != s.apiVersion || name != s.name && name != prefix+s.name+suffix {
			return nil
		}
	}
	return order
}

// kustomizeBuild runs kustomize; the caller holds kustomizeMu. As in Flux,
// each build starts from kustomize's built-in schema alone and leaves
// nothing behind for the next. Flux resets the schema and parses the
// built-in one around every build, so that a kustomization's own schemas
// add to it; parsing it takes a fifth of a second, so that is done only
// around a build that adds schemas of its own (schemas: its
// kustomizations have openapi or crds fields). The others leave the
// built-in schema as they found it, parsed or not: kustomize parses it
// when it first needs it (a strategic merge patch does; names, labels and
// namespaces do not, kyaml's namespace scopes being precomputed), and so a
// lint whose builds never need it never pays for it.
func kustomizeBuild(fs filesys.FileSystem, dir string, schemas bool) (m resmap.ResMap, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	if schemas {
		openapi.ResetOpenAPI()
		defer openapi.ResetOpenAPI()
		_ = openapi.Schema()
	}
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	})
	return k.Run(fs, dir)
}

// kustomizationFile is dir's kustomization file, as kustomize finds it.
func kustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
			return filepath.Join(dir, name)
		}
	}
	return filepath.Join(dir, konfig.DefaultKustomizationFileName())
}

// localInfo is what checkLocal finds out about a kustomization and the
// ones it reads: schemas is set when one has an openapi or crds field,
// which add schemas to kustomize's global OpenAPI schema; deprecated are
// the warnings kustomize prints about their deprecated fields.
type localInfo struct {
	schemas    bool
	deprecated []deprecation
}

// deprecation is a warning kustomize prints about a kustomization file.
type deprecation struct{ file, warning string }

// checkLocal refuses kustomization entries that kustomize would fetch (URLs,
// git repositories) and follows local ones, so a build never reaches the
// network; and it refuses resource files kustomize would crash on. kfile
// is k's file, and info gathers what the build needs to know of them all.
func checkLocal(root, dir string, k *kustypes.Kustomization, kfile string, seen map[string]bool, info *localInfo) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	if len(k.OpenAPI) > 0 || len(k.Crds) > 0 {
		info.schemas = true
	}
	if w := k.CheckDeprecatedFields(); w != nil {
		for _, msg := range *w {
			info.deprecated = append(info.deprecated, deprecation{file: relSlash(root, kfile), warning: msg})
		}
	}
	if field, url := remoteFile(k); url != "" {
		return fmt.Errorf("%s: %s %q: %w", relSlash(root, kfile), field, url, ErrRemoteFile)
	}
	entries := slices.Concat(k.Resources, k.Components, k.Bases) //nolint:staticcheck // Bases still builds
	for _, e := range entries {
		if looksRemote(e) {
			return fmt.Errorf("%s: resource %q: %w", relSlash(root, dir), e, ErrRemote)
		}
		p := filepath.Join(dir, filepath.FromSlash(e))
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			// kustomize fails too, without naming the kustomization.
			return &FileError{Path: relSlash(root, kustomizationFile(dir)), Err: fmt.Errorf("resource %q: %w", e, err)}
		}
		if err != nil {
			continue // kustomize reports it
		}
		if !fi.IsDir() {
			// kustomize would crash on an alias inside its own anchor.
			data, err := inputfile.ReadManifest(p)
			if err == nil {
				err = yamlutil.Check(data)
			}
			if err != nil {
				return &FileError{Path: relSlash(root, p), Err: err}
			}
			continue
		}
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			data, err := os.ReadFile(filepath.Join(p, name))
			if err != nil {
				continue
			}
			var sub kustypes.Kustomization
			if err := sigyaml.Unmarshal(data, &sub); err != nil {
				return &FileError{Path: relSlash(root, filepath.Join(p, name)), Err: err}
			}
			if err := checkLocal(root, p, &sub, filepath.Join(p, name), seen, info); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// remoteFile returns the first file k names that kustomize would download
// (its loader fetches every http and https URL it is asked to load), and
// the field naming it: a generator's file or env source, a patch, a
// replacement, an OpenAPI schema, CRDs, transformer configurations; or a
// generator, transformer or validator entry kustomize would fetch as a
// resource. None: "", "".
func remoteFile(k *kustypes.Kustomization) (field, url string) {
	isURL := func(p string) bool { // kustomize's own test, internal/loader.IsRemoteFile, is not exported
		u, err := neturl.Parse(p)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https")
	}
	sources := func(kind string, g kustypes.GeneratorArgs) (string, string) {
		for _, f := range g.FileSources {
			if _, p, ok := strings.Cut(f, "="); ok && isURL(p) || isURL(f) {
				return kind + " file", f
			}
		}
		for _, e := range append(slices.Clone(g.EnvSources), g.EnvSource) { //nolint:staticcheck // EnvSource still builds
			if isURL(e) {
				return kind + " env", e
			}
		}
		return "", ""
	}
	for _, g := range k.ConfigMapGenerator {
		if field, url := sources("configMapGenerator", g.GeneratorArgs); url != "" {
			return field, url
		}
	}
	for _, g := range k.SecretGenerator {
		if field, url := sources("secretGenerator", g.GeneratorArgs); url != "" {
			return field, url
		}
	}
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) { //nolint:staticcheck // patchesJson6902 still builds
		if isURL(p.Path) {
			return "patch", p.Path
		}
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // patchesStrategicMerge still builds
		if isURL(string(p)) {
			return "patch", string(p)
		}
	}
	for _, r := range k.Replacements {
		if isURL(r.Path) {
			return "replacement", r.Path
		}
	}
	if p := k.OpenAPI["path"]; isURL(p) {
		return "openapi", p
	}
	for _, p := range slices.Concat(k.Crds, k.Configurations) {
		if isURL(p) {
			return "file", p
		}
	}
	for _, e := range slices.Concat(k.Generators, k.Transformers, k.Validators) {
		if !strings.Contains(e, "\n") && looksRemote(e) { // not an inline configuration
			return "plugin", e
		}
	}
	return "", ""
}

// looksRemote is true for what kustomize reads as a URL or a git
// repository (scheme://, git@host:, gh:, host.tld/...).
func looksRemote(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git@") || strings.HasPrefix(e, "gh:") || strings.HasPrefix(e, "git::") || strings.Contains(e, "?ref=") {
		return true
	}
	first, rest, ok := strings.Cut(e, "/")
	return ok && rest != "" && first != "." && first != ".." && strings.Contains(first, ".")
}

// overlayFS is the disk with one file replaced: the kustomization Flux
// generates or rewrites, which fluxpack never writes into the source.
type overlayFS struct {
	filesys.FileSystem
	path string
	data []byte
}

func (o *overlayFS) is(p string) bool { return filepath.Clean(p) == o.path }

func (o *overlayFS) Exists(p string) bool { return o.is(p) || o.FileSystem.Exists(p) }

func (o *overlayFS) IsDir(p string) bool { return !o.is(p) && o.FileSystem.IsDir(p) }

func (o *overlayFS) ReadFile(p string) ([]byte, error) {
	if o.is(p) {
		return slices.Clone(o.data), nil
	}
	return o.FileSystem.ReadFile(p)
}

func (o *overlayFS) ReadDir(p string) ([]string, error) {
	names, err := o.FileSystem.ReadDir(p)
	if err != nil || filepath.Clean(p) != filepath.Dir(o.path) {
		return names, err
	}
	base := filepath.Base(o.path)
	if slices.Contains(names, base) {
		return names, nil
	}
	return append(names, base), nil
}

// lineIndex finds an object's line in the file kustomize says it came from.
type lineIndex struct {
	root  string
	files map[string][]*sourceLine // by absolute path
	lines map[string][][]byte      // the lines of files, for reline, by absolute path
}

// sourceLine is an object of a file as the file has it, and whether a
// built object was found there already.
type sourceLine struct {
	kind, name, namespace string
	line                  int
	taken                 bool
}

func (x *lineIndex) add(f *file) {
	objs := make([]*sourceLine, 0, len(f.nodes))
	for _, n := range f.nodes {
		objs = append(objs, &sourceLine{kind: yamlutil.Str(n, "kind"), name: yamlutil.Str(n, "metadata", "name"),
			namespace: yamlutil.Str(n, "metadata", "namespace"), line: n.Line})
	}
	x.files[f.abs] = objs
}

// find returns the file of abs, relative, and the line of the object o
// came from there: the document of its kind with its name and namespace,
// or its name (a kustomization's namespace changes it), or the longest
// name its own holds (a prefix or suffix), or the next of its kind. A
// document found for one object is taken for another only when no other
// fits, so a file of one name in many namespaces gives each its line.
func (x *lineIndex) find(abs string, o *Object) (string, int) {
	objs, ok := x.files[abs]
	if !ok {
		f := &file{abs: abs, rel: relSlash(x.root, abs)}
		if data, err := inputfile.ReadManifest(abs); err == nil {
			f.nodes, _ = readIdentities(f.rel, data)
		}
		x.add(f)
		objs = x.files[abs]
	}
	rel := relSlash(x.root, abs)
	fits := []func(c *sourceLine) int{ // how well c fits, 0 not at all
		func(c *sourceLine) int { return b2i(c.name == o.Name && c.namespace == o.Namespace) },
		func(c *sourceLine) int { return b2i(c.name == o.Name) },
		func(c *sourceLine) int {
			if c.name != "" && strings.Contains(o.Name, c.name) {
				return len(c.name)
			}
			return 0
		},
		func(*sourceLine) int { return 1 },
	}
	for _, taken := range []bool{false, true} {
		for _, fit := range fits {
			var best *sourceLine
			score := 0
			for _, c := range objs {
				if c.kind != o.Kind || c.taken && !taken {
					continue
				}
				if s := fit(c); s > score {
					best, score = c, s
				}
			}
			if best != nil {
				best.taken = true
				return rel, best.line
			}
		}
	}
	return rel, 1
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reline puts the scalars of o's node that hold a $ (the ${var} uses
// postBuild substitutes) at the lines they have in file, where o comes
// from (absolute), reading the text of o's document there rather than
// parsing it again: a scalar is at the first line of the document, not a
// comment, that holds its value as written (a block scalar's first line,
// the scalar itself a line above it, as the parser has it) and that no
// earlier scalar of that value took; at o.Line when there is none (a
// patch wrote it, or the file escapes it), a block scalar then counting
// its lines from there.
func (x *lineIndex) reline(file string, o *Object) {
	var uses []*yaml.Node
	walkScalars(o.Node, func(n *yaml.Node) {
		if strings.Contains(n.Value, "$") {
			uses = append(uses, n)
		}
	})
	if len(uses) == 0 {
		return
	}
	lines := x.text(file)
	first := min(max(o.Line-1, 0), len(lines)) // o's document, 0-based
	last := first
	for last < len(lines) && (last == first || !bytes.HasPrefix(lines[last], []byte("---"))) {
		last++
	}
	type take struct {
		line  int
		value string
	}
	taken := map[take]bool{}
	for _, n := range uses {
		h, _, _ := strings.Cut(n.Value, "\n")
		block := n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		head := []byte(strings.TrimSpace(h))
		at := 0
		for j := first; j < last && len(head) > 0; j++ {
			t := bytes.TrimSpace(lines[j])
			if len(t) == 0 || t[0] == '#' || taken[take{j, n.Value}] {
				continue
			}
			if block && bytes.Equal(t, head) || !block && bytes.Contains(t, head) {
				taken[take{j, n.Value}] = true
				at = j + 1
				break
			}
		}
		switch {
		case at == 0:
			n.Line, n.Column = o.Line, 1
		case block:
			n.Line, n.Column = at-1, 1
		default:
			n.Line, n.Column = at, 1
		}
	}
}

// text is the lines of file (absolute), read once; none when it cannot
// be read.
func (x *lineIndex) text(file string) [][]byte {
	if l, ok := x.lines[file]; ok {
		return l
	}
	var l [][]byte
	if data, err := inputfile.ReadManifest(file); err == nil {
		l = bytes.Split(data, []byte{'\n'})
	}
	if x.lines == nil {
		x.lines = map[string][][]byte{}
	}
	x.lines[file] = l
	return l
}

// walkScalars calls fn for every scalar under n, keys included.
func walkScalars(n *yaml.Node, fn func(*yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		fn(n)
		return
	}
	for _, c := range n.Content {
		walkScalars(c, fn)
	}
}

// originOf reads r's origin annotation: the file it came from (Path), or
// the kustomization whose generator made it (ConfiguredIn).
func originOf(r *resource.Resource) resource.Origin {
	var origin resource.Origin
	if anno := r.GetAnnotations()[originAnnotation]; anno != "" {
		_ = sigyaml.Unmarshal([]byte(anno), &origin)
	}
	return origin
}

// generatorFields are the kustomization fields of kustomize's generators,
// by the kind an origin annotation names them.
var generatorFields = map[string]string{
	"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator", "HelmChartInflationGenerator": "helmCharts",
}

// generatorLine is the line of the entry of the kustomization file kfile
// whose generator (of kind) made the object named name: the entry with
// the longest name the object's holds (kustomize adds a hash, a prefix, a
// suffix), or the generator field itself; 0 when the file does not say.
func generatorLine(kfile, kind, name string) int {
	data, err := inputfile.ReadManifest(kfile)
	if err != nil {
		return 0
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	top := doc.Content[0]
	field, ok := generatorFields[kind]
	if !ok {
		return 0
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != field {
			continue
		}
		line, best := top.Content[i].Line, 0
		for _, item := range top.Content[i+1].Content {
			if n := yamlutil.Str(item, "name"); n != "" && len(n) > best && strings.Contains(name, n) {
				line, best = item.Line, len(n)
			}
		}
		return line
	}
	return 0
}

// duplicateFile is, for a kustomize error about an id registered twice in
// the kustomization Flux generates for a directory, the error naming both
// files and lines (checkUnique's, as for a plain directory); nil for
// another error, or when the files' objects do not show the duplicate.
func (g *generated) duplicateFile(err error) error {
	if g.found || !strings.Contains(err.Error(), "already registered id") {
		return nil
	}
	var objs []*Object
	for _, f := range g.files {
		for _, n := range f.nodes {
			if o, err := newObject(n); err == nil {
				o.File, o.Line = f.rel, n.Line
				objs = append(objs, o)
			}
		}
	}
	return checkUnique(objs)
}
