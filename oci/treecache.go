package oci

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// WithTreeCache keeps, in dir, the content digest of each tree pushed
// (the digest of its tar stream) with the identity of every file it was
// computed from: device, inode, mode, size, and modification and change
// times, as stat(2) gives them. A later push of the same directory whose
// files all have the same identity takes the digest from the cache, with
// one stat per file instead of reading and hashing the tree; it still asks
// the registry what the tag holds, and an unchanged push still needs the
// tag's artifact to record that digest. A file written to, or replaced,
// gets a new change time, which no program can set back; files changed
// less than two seconds before a push are not cached, so that a change
// within the file system's timestamp granularity is not missed. Entries
// are keyed by the directory's real path and by whether Secrets were
// checked (WithAllowSecrets), so a tree cached under WithAllowSecrets is
// checked again without it. On systems other than Linux and macOS nothing
// is cached. dir is created when first written; a cache that cannot be
// read or written is ignored.
func WithTreeCache(dir string) PushOption {
	return pushOpt{func(o *options) error {
		if dir == "" {
			return fmt.Errorf("%s: empty directory", "WithTreeCache")
		}
		o.treeCache = dir
		return nil
	}}
}

// treeCacheVersion names the tar stream's format in the cache: change it
// whenever the same files would give another stream.
const treeCacheVersion = "fluxpack-tree-1"

// racyWindow: a file changed this recently before the read that hashed it
// is not cached (see inputfile.Identity.Settled).
var racyWindow = 2 * time.Second

// treeCacheEntry is the file kept for one tree.
type treeCacheEntry struct {
	Version     string `json:"version"`
	Fingerprint string `json:"fingerprint"` // of the entries and their files' identities
	Content     string `json:"content"`     // digest of the tar stream
	Size        int64  `json:"size"`        // length of the tar stream
	Entries     int    `json:"entries"`     // of the tree: the next scan's capacity
}

// loadTreeCache reads the entry kept in dir for the tree rooted at root.
func loadTreeCache(dir, root string) *treeCacheEntry {
	raw, err := os.ReadFile(treeCachePath(dir, root))
	if err != nil {
		return nil
	}
	var c treeCacheEntry
	if json.Unmarshal(raw, &c) != nil || c.Version != treeCacheVersion {
		return nil
	}
	return &c
}

// treeCachePath is where the entry of the tree rooted at root is kept.
func treeCachePath(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
}

// fingerprint digests what the tar stream of t depends on: the entries,
// in order, and the identity of every file's content, with whether Secrets
// were checked. It returns false when an identity is unknown.
func fingerprint(t *tree, checkSecrets bool) (string, bool) {
	h := sha256.New()
	buf := fmt.Appendf(make([]byte, 0, 4<<10), "%s\x00%t\x00", treeCacheVersion, checkSecrets)
	for _, e := range t.entries {
		buf = append(buf, e.name...)
		buf = append(buf, 0)
		buf = append(buf, e.link...)
		buf = append(buf, 0)
		if e.dir {
			buf = append(buf, 'd')
		} else {
			if !e.id.Known() {
				return "", false
			}
			buf = appendIdentity(append(buf, 'f'), e.id)
		}
		if len(buf) > 3<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil)), true
}

func appendIdentity(b []byte, id inputfile.Identity) []byte {
	b = binary.LittleEndian.AppendUint64(b, id.Dev)
	b = binary.LittleEndian.AppendUint64(b, id.Ino)
	b = binary.LittleEndian.AppendUint32(b, id.Mode)
	b = binary.LittleEndian.AppendUint64(b, uint64(id.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(id.Mtime))
	return binary.LittleEndian.AppendUint64(b, uint64(id.Ctime))
}

// cachedContent returns the digest and length of t's tar stream when the
// cache entry the scan read (t.cached) holds them for t's files as the scan
// found them.
func cachedContent(t *tree, checkSecrets bool) (v1.Hash, int64, bool) {
	c := t.cached
	if c == nil {
		return v1.Hash{}, 0, false
	}
	fp, ok := fingerprint(t, checkSecrets)
	if !ok || fp != c.Fingerprint {
		return v1.Hash{}, 0, false
	}
	content, err := v1.NewHash(c.Content)
	if err != nil {
		return v1.Hash{}, 0, false
	}
	return content, c.Size, true
}

// cacheContent keeps the digest and length of t's tar stream, read after
// the scan, when every file had settled before the scan began.
func cacheContent(dir string, t *tree, checkSecrets bool, content v1.Hash, size int64) error {
	for _, e := range t.entries {
		if !e.dir && !e.id.Settled(t.scanned.UnixNano(), racyWindow.Nanoseconds()) {
			return errNotSettled
		}
	}
	fp, ok := fingerprint(t, checkSecrets)
	if !ok {
		return errNotSettled
	}
	raw, err := json.Marshal(treeCacheEntry{Version: treeCacheVersion, Fingerprint: fp, Content: content.String(), Size: size, Entries: len(t.entries)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(treeCachePath(dir, t.root), raw, 0o600)
}

// errNotSettled: a file changed too recently, or its identity is unknown.
var errNotSettled = errors.New("files changed too recently to cache")

// dropCachedContent forgets the cached content of t.
func dropCachedContent(dir string, t *tree) {
	_ = os.Remove(treeCachePath(dir, t.root))
}
