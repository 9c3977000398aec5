package fluxbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// WithCache keeps the kustomize builds of Build in dir, across processes,
// and takes a build from there when its inputs are the same: the
// kustomization (the directory's own with the Kustomization's fields
// written into it, or the one Flux generates), the directory's path
// relative to the source's root, the program (kustomize's version, and
// fluxpack's own executable: a new one starts afresh), and the content of
// every file, directory listing and path kustomize asked about during the
// build, recorded relative to the source's root and asked again before
// an entry is taken (so one entry serves a tree and its copy in another
// place, and a file added where the build looked is seen). What is kept
// is the kustomize step of Build: kustomize's objects, node for node,
// with the files and lines Build gives them (the kustomization file as
// written is one of the reads). postBuild substitution (Preview) and the
// directories read without kustomize run as before, and a build from the
// cache returns what the build would (TestCacheMatchesBuild).
//
// A build that failed, or whose objects include a Secret with a value
// that is neither SOPS ciphertext nor a 1Password reference (op://…,
// which `op inject` resolves after the build: a secretGenerator's value,
// or a Secret written in clear) is not kept: the cache holds no secret.
// Entries are written atomically, readable by their
// owner only; an entry that cannot be read is a miss (logged at debug
// level with WithLogger); entries not used for 30 days are removed, at
// most once a day. A build that ends after its ctx is done (its caller
// stopped waiting for it) writes nothing. Without WithCache (nor
// ContextWithCache) nothing is kept.
func WithCache(dir string) Option {
	return funcOption(func(c *config) error {
		abs, err := cacheDirOf(dir)
		if err != nil {
			return err
		}
		c.cacheDir = abs
		return nil
	})
}

type cacheContextKey struct{}

// ContextWithCache returns ctx with dir as the build cache (WithCache) of
// every Build and Preview under it that has no WithCache of its own: a
// command sets it once for the builds of the packages it calls. An empty
// dir leaves ctx as it is.
func ContextWithCache(ctx context.Context, dir string) (context.Context, error) {
	if dir == "" {
		return ctx, nil
	}
	abs, err := cacheDirOf(dir)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, cacheContextKey{}, abs), nil
}

func cacheDirOf(dir string) (string, error) {
	if dir == "" {
		return "", errdefs.InvalidOption("WithCache: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", errdefs.InvalidOption("WithCache: %v", err)
	}
	return abs, nil
}

// cacheFor is the build cache of a build under ctx with cfg, or nil.
func (c *config) cacheFor(ctx context.Context) *buildCache {
	dir := c.cacheDir
	if dir == "" {
		dir, _ = ctx.Value(cacheContextKey{}).(string)
	}
	if dir == "" {
		return nil
	}
	v, _ := caches.LoadOrStore(dir, &buildCache{dir: dir})
	return v.(*buildCache)
}

// caches are the build caches of the process, by directory.
var caches sync.Map

// The cache's format: change cacheFormat whenever an entry of the same
// key would hold something else.
const (
	cacheFormat   = "fluxpack-kustomize-1\n"
	cacheVariants = 8                   // entries kept per key (per kustomization and place)
	cacheMaxAge   = 30 * 24 * time.Hour // an entry unused this long is removed
	cachePruneGap = 24 * time.Hour      // how often that is checked
	cacheTouchGap = 24 * time.Hour      // a hit older than this refreshes its time
	cachePruned   = "pruned"            // the file whose time says when that was
)

// buildCache is one cache directory.
type buildCache struct {
	dir   string
	prune sync.Once
	roots sync.Map // source roots, symbolic links resolved
	// hits and stores count the builds taken from the cache and kept in
	// it, for tests.
	hits, stores atomic.Int64
}

// programVersion names the program, for the key: the kustomize it is
// built with (another may build the same inputs otherwise), and the
// program itself, as its executable file (path, size and time: a new
// build of fluxpack may make other objects of the same build), so an
// upgrade, or a developer's next build, starts with no entry.
var programVersion = sync.OnceValue(func() string {
	var b strings.Builder
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(&b, "%s %d %d;", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	fmt.Fprintf(&b, "%s@%s;", bi.Main.Path, bi.Main.Version)
	for _, s := range bi.Settings {
		if strings.HasPrefix(s.Key, "vcs.") {
			fmt.Fprintf(&b, "%s=%s;", s.Key, s.Value)
		}
	}
	for _, d := range bi.Deps {
		if strings.HasPrefix(d.Path, "sigs.k8s.io/kustomize/") {
			if d.Replace != nil {
				d = d.Replace
			}
			fmt.Fprintf(&b, "%s@%s %s;", d.Path, d.Version, d.Sum)
		}
	}
	return b.String()
})

// cacheEntry is the cache of one build: its key, where it would be, and
// the disk that records what the build reads.
type cacheEntry struct {
	c    *buildCache
	g    *generated
	key  string
	root string // the source's root, symbolic links resolved
}

// entry returns the cache entry of g's kustomize build, or nil without a
// cache or when the build cannot be cached. The key is what the files do
// not say: the kustomization with the Kustomization's fields (for a
// directory without one, the list of its files), where it is in the
// source, and how Build asks kustomize for the objects' origins.
func (c *buildCache) entry(g *generated) *cacheEntry {
	if c == nil {
		return nil
	}
	c.prune.Do(c.pruneOld)
	root, err := c.realRoot(g.root)
	if err != nil {
		return nil
	}
	dir, err := g.snap.evalSymlinks(g.dir)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil
	}
	manifest, err := json.Marshal(&g.kus)
	if err != nil {
		return nil
	}
	h := sha256.New()
	for _, s := range []string{cacheFormat, programVersion(), filepath.ToSlash(rel), g.relSlash(g.dir), filepath.Base(g.kfile),
		fmt.Sprint(g.found, g.trackOrigins), string(manifest)} {
		h.Write(binary.AppendUvarint(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	e := &cacheEntry{c: c, g: g, key: fmt.Sprintf("%x", h.Sum(nil)), root: root}
	g.rec = newRecordFS(root)
	return e
}

// realRoot is root with its symbolic links resolved, resolved once: a
// source's root is the same for all its builds.
func (c *buildCache) realRoot(root string) (string, error) {
	if r, ok := c.roots.Load(root); ok {
		return r.(string), nil
	}
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	c.roots.Store(root, r)
	return r, nil
}

// keyFile is where the entries of the key are: one file, beside every
// other key's (a lookup opens one file by name; a folder per key would
// cost a directory to make per build kept).
func (e *cacheEntry) keyFile() string { return filepath.Join(e.c.dir, e.key) }

func (e *cacheEntry) debug(msg string, args ...any) {
	if e.g.log != nil {
		e.g.log.Debug("kustomize cache: "+msg, append([]any{"key", e.key[:16]}, args...)...)
	}
}

// disk is the file system kustomize reads: the disk, recorded for the
// cache when there is one.
func (g *generated) disk() filesys.FileSystem {
	if g.rec != nil {
		return g.rec
	}
	return filesys.MakeFsOnDisk()
}

// get returns what g.kustomize returned for the newest entry of the key
// whose reads give the same answers now; false when there is none.
func (e *cacheEntry) get() ([]*resource.Resource, []*Object, bool) {
	if e == nil {
		return nil, nil, false
	}
	path := e.keyFile()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, false
	}
	variants, err := decodeVariants(data)
	if err != nil {
		e.debug("ignoring an entry that cannot be read", "file", path, "err", err)
		return nil, nil, false
	}
	for _, v := range variants {
		reads, err := decodeReads(v.reads)
		if err != nil {
			e.debug("ignoring an entry that cannot be read", "file", path, "err", err)
			return nil, nil, false
		}
		if !replay(e.root, reads, e.g.snap) {
			continue
		}
		ress, objs, deprecated, err := decodeBuild(v.build)
		if err != nil {
			e.debug("ignoring an entry that cannot be read", "file", path, "err", err)
			return nil, nil, false
		}
		for _, d := range deprecated {
			if e.g.log != nil {
				e.g.log.Debug("kustomize: "+strings.TrimPrefix(d.warning, "# "), "kustomization", d.file)
			}
		}
		e.c.hits.Add(1)
		if fi, err := os.Stat(path); err == nil {
			if now := time.Now(); now.Sub(fi.ModTime()) > cacheTouchGap {
				_ = os.Chtimes(path, now, now) // used: the age pruneOld reads
			}
		}
		return ress, objs, true
	}
	return nil, nil, false
}

// put keeps what g.kustomize returns (the resources and the objects made
// of them, which share their nodes) with what the build read, and the
// warnings about deprecated fields it logged, as the newest entry of the
// key; the key keeps cacheVariants entries (a tree and its base revision
// differ in the files a change touched).
func (e *cacheEntry) put(ress []*resource.Resource, objs []*Object, deprecated []deprecation) {
	if e == nil {
		return
	}
	reads, why := e.g.rec.snapshot()
	if why != "" {
		e.debug("not kept: the build did "+why, "root", e.root)
		return
	}
	if e.g.found {
		// The objects' lines come from the kustomization file as written
		// (a generator's entry), which the key holds only as read.
		dir, err := filepath.EvalSymlinks(filepath.Dir(e.g.kfile))
		if err != nil {
			return
		}
		rel, ok := e.g.rec.rel(filepath.Join(dir, filepath.Base(e.g.kfile)))
		if !ok {
			e.debug("not kept: the kustomization file's path cannot be recorded", "root", e.root)
			return
		}
		data, err := os.ReadFile(e.g.kfile)
		reads = append(reads, fsRead{op: opRead, rel: rel, answer: fileAnswer(data, err)})
	}
	if s := secretValues(ress); s != "" {
		e.debug("not kept: it holds a Secret's values", "secret", s)
		return
	}
	build, err := appendBuild(nil, ress, objs, deprecated)
	if err != nil {
		e.debug("not kept: "+err.Error(), "root", e.root)
		return
	}
	variants := []variant{{reads: encodeReads(reads), build: build}}
	path := e.keyFile()
	if data, err := os.ReadFile(path); err == nil {
		if old, err := decodeVariants(data); err == nil {
			for _, v := range old {
				if len(variants) < cacheVariants && !bytes.Equal(v.reads, variants[0].reads) {
					variants = append(variants, v)
				}
			}
		}
	}
	if err := os.MkdirAll(e.c.dir, 0o700); err != nil {
		e.debug("not kept", "err", err)
		return
	}
	if err := atomicfile.WriteFile(path, encodeVariants(variants), 0o600); err != nil {
		e.debug("not kept", "err", err)
		return
	}
	e.c.stores.Add(1)
}

// variant is one entry of a key: what the build read, and what it made.
type variant struct{ reads, build []byte }

// encodeVariants is the file of a key's entries, newest first, with the
// format first and a sha256 of the rest last.
func encodeVariants(vs []variant) []byte {
	b := []byte(cacheFormat)
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendUvarint(b, uint64(len(v.reads)))
		b = append(b, v.reads...)
		b = binary.AppendUvarint(b, uint64(len(v.build)))
		b = append(b, v.build...)
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodeVariants checks a key's file and returns its entries.
func decodeVariants(data []byte) ([]variant, error) {
	if len(data) < sha256.Size+len(cacheFormat) {
		return nil, errors.New("too short")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, errors.New("checksum mismatch")
	}
	if !bytes.HasPrefix(body, []byte(cacheFormat)) {
		return nil, errors.New("another format")
	}
	r := &nodeReader{b: body[len(cacheFormat):]}
	count := r.uvarint()
	if r.err == nil && count > uint64(len(r.b)) {
		return nil, errors.New("entry count out of range")
	}
	vs := make([]variant, 0, count)
	for i := uint64(0); i < count && r.err == nil; i++ {
		vs = append(vs, variant{reads: r.bytes(), build: r.bytes()})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return vs, nil
}

// appendBuild appends the objects of a build and their nodes, and the
// deprecation warnings, to b.
func appendBuild(b []byte, ress []*resource.Resource, objs []*Object, deprecated []deprecation) ([]byte, error) {
	if len(ress) != len(objs) {
		return nil, errors.New("the objects are not the resources")
	}
	b = binary.AppendUvarint(b, uint64(len(deprecated)))
	for _, d := range deprecated {
		b = appendString(appendString(b, d.file), d.warning)
	}
	b = binary.AppendUvarint(b, uint64(len(objs)))
	var err error
	for i, o := range objs {
		if o.Node != ress[i].YNode() || o.IdentityOnly || o.local {
			return nil, errors.New("an object that is not its resource")
		}
		for _, s := range []string{o.APIVersion, o.Kind, o.Namespace, o.Name, o.File} {
			b = appendString(b, s)
		}
		b = binary.AppendVarint(b, int64(o.Line))
		flags := uint64(0)
		for bit, f := range []bool{o.Built, o.ScalarLines, o.Dollar} {
			if f {
				flags |= 1 << bit
			}
		}
		b = binary.AppendUvarint(b, flags)
		if b, err = appendNode(b, o.Node, 0); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeBuild reads what appendBuild wrote.
func decodeBuild(b []byte) ([]*resource.Resource, []*Object, []deprecation, error) {
	r := &nodeReader{b: b}
	count := r.uvarint()
	if r.err == nil && count > uint64(len(r.b)) {
		return nil, nil, nil, errors.New("warning count out of range")
	}
	var deprecated []deprecation
	for i := uint64(0); i < count && r.err == nil; i++ {
		deprecated = append(deprecated, deprecation{file: r.string(), warning: r.string()})
	}
	count = r.uvarint()
	if r.err == nil && count > uint64(len(r.b)) {
		return nil, nil, nil, errors.New("object count out of range")
	}
	ress := make([]*resource.Resource, 0, count)
	objs := make([]*Object, 0, count)
	for i := uint64(0); i < count && r.err == nil; i++ {
		o := &Object{APIVersion: r.string(), Kind: r.string(), Namespace: r.string(), Name: r.string(), File: r.string(), Line: r.varint()}
		flags := r.uvarint()
		o.Built, o.ScalarLines, o.Dollar = flags&1 != 0, flags&2 != 0, flags&4 != 0
		o.Node = r.node(0)
		if r.err != nil {
			break
		}
		ress = append(ress, &resource.Resource{RNode: *kyaml.NewRNode(o.Node)})
		objs = append(objs, o)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, nil, nil, r.err
	}
	return ress, objs, deprecated, nil
}

// pruneOld removes the keys not used for cacheMaxAge, when that was not
// done for cachePruneGap.
func (c *buildCache) pruneOld() {
	stamp := filepath.Join(c.dir, cachePruned)
	now := time.Now()
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < cachePruneGap {
		return
	}
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return // nothing kept yet
	}
	for _, d := range des {
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && d.Name() != cachePruned && now.Sub(fi.ModTime()) > cacheMaxAge {
			_ = os.Remove(filepath.Join(c.dir, d.Name()))
		}
	}
	_ = atomicfile.WriteFile(stamp, nil, 0o600)
}

// encodeReads is what a build read, as an entry keeps it.
func encodeReads(reads []fsRead) []byte {
	b := binary.AppendUvarint(nil, uint64(len(reads)))
	for _, r := range reads {
		b = append(b, r.op)
		b = appendString(appendString(b, r.rel), r.answer)
	}
	return b
}

// decodeReads reads what encodeReads wrote.
func decodeReads(b []byte) ([]fsRead, error) {
	r := &nodeReader{b: b}
	count := r.uvarint()
	if r.err == nil && count > uint64(len(r.b)) {
		return nil, errors.New("read count out of range")
	}
	reads := make([]fsRead, 0, count)
	for i := uint64(0); i < count && r.err == nil; i++ {
		if len(r.b) == 0 {
			return nil, errors.New("truncated read")
		}
		op := r.b[0]
		r.b = r.b[1:]
		reads = append(reads, fsRead{op: op, rel: r.string(), answer: r.string()})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return reads, r.err
}

// secretValues names the first Secret of ress that holds a value that is
// not a stand-in for one (secretStandIn), or is "".
func secretValues(ress []*resource.Resource) string {
	for _, r := range ress {
		if r.GetKind() != "Secret" {
			continue
		}
		n := r.YNode()
		for _, field := range []string{"data", "stringData"} {
			m := yamlutil.Field(n, field)
			if m == nil {
				continue
			}
			if m.Kind != yaml.MappingNode {
				return r.GetNamespace() + "/" + r.GetName()
			}
			for i := 1; i < len(m.Content); i += 2 {
				v := m.Content[i]
				if v.Kind != yaml.ScalarNode || !secretStandIn(v.Value, field == "data") {
					return r.GetNamespace() + "/" + r.GetName()
				}
			}
		}
	}
	return ""
}

// secretStandIn reports whether a Secret's value v is what stands in the
// repository for a secret, not the secret: empty, SOPS ciphertext (as
// SOPS writes it, in data too), or, once decoded from base64 when encoded
// (data), one 1Password secret reference (op://vault/item/field, bare or
// as `op inject` reads it, {{ op://… }}), which a bootstrap step resolves
// after kustomize builds the folder.
func secretStandIn(v string, encoded bool) bool {
	if v == "" || strings.HasPrefix(v, "ENC[") {
		return true
	}
	if encoded {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return false
		}
		v = string(b)
	}
	if t, ok := strings.CutPrefix(v, "{{"); ok {
		if t, ok = strings.CutSuffix(t, "}}"); !ok {
			return false
		}
		v = strings.TrimSpace(t)
	}
	ref, ok := strings.CutPrefix(v, "op://")
	return ok && strings.Count(ref, "/") >= 2 && !strings.ContainsAny(ref, " \t\n{}")
}
