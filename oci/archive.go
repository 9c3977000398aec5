package oci

import (
	"archive/tar"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/gzip"

	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// archiver writes a tree as a tar stream the way fluxcd/pkg/tar does: a
// lexical walk, uid/gid, owner names and times zeroed, no gzip mtime, and
// here also modes normalised (directories and executables 0755, other files
// 0644), so the stream depends on nothing but names and contents.
//
// Files are read by a few goroutines ahead of the writer, which keeps the
// order. A pass either hashes the stream (contentDigest) or compresses it
// (startCompress); Push runs both at once, so knowing that nothing changed
// costs reading and hashing, never compressing. The hashing pass hands the
// files it read to the compressing one (see handoff), so each file is read
// once.
type archiver struct {
	display      string // the tree's directory as the caller named it
	checkSecrets bool   // refuse plaintext Secrets and IaC outputs
	inputs       namedInputs
	// onFile, when set, sees every file's archive name, mode and content.
	onFile func(name string, mode int64, data []byte)
	// handoff, when set, receives every file this pass read, for a
	// compressing pass.
	handoff  *handoff
	size     int64 // bytes of file content archived so far
	streamed int64 // bytes of the tar stream contentDigest hashed
}

// MaxArtifactSize bounds the content of an artifact: the sizes of its files
// added up. It is what Pull (and Flux's untar, by default) accept, so a push
// never makes an artifact that cannot be pulled back.
const MaxArtifactSize = MaxPullSize

// ErrTooBig is wrapped by the error about a tree over MaxArtifactSize.
var ErrTooBig = errors.New("artifact too big")

// account adds a file of size bytes to the archive's content, or refuses it
// when the content would go over MaxArtifactSize.
func (a *archiver) account(e entry, size int64) error {
	a.size += size
	if a.size > MaxArtifactSize {
		return &FileError{Path: filepath.Join(a.display, filepath.FromSlash(e.name)), Err: fmt.Errorf(
			"%w: the files up to this one hold %d bytes, over the limit of %d bytes (oci.MaxArtifactSize)", ErrTooBig, a.size, int64(MaxArtifactSize))}
	}
	return nil
}

const (
	readers     = 4       // goroutines reading files ahead of the writer
	lookahead   = 64      // files read ahead at most
	inlineLimit = 1 << 20 // bigger files are streamed by the writer, not read ahead
)

// fileData is one file read ahead.
type fileData struct {
	data []byte
	mode int64
	big  bool // over inlineLimit: the writer streams it instead
	err  error
	// pinned: data belongs to a Tree, which archives it again; it is
	// never recycled.
	pinned bool
}

// handoff passes the files a hashing pass has read, in archive order, to a
// compressing pass running behind it, so Push reads every file once while
// the hash still runs at reading speed: the hashing pass never waits for
// gzip. At most handoffBudget bytes wait in it; a file that finds it full,
// or too big to read ahead, is handed over as "read it again" and the
// compressing pass reads it itself, so a compressor slower than the disk
// costs memory only up to the budget.
type handoff struct {
	files    chan fileData // one slot per file of the tree: sending never blocks
	budget   int64         // handoffBudget, but in tests
	inFlight atomic.Int64  // bytes of file content waiting in files
}

// handoffBudget bounds the file content waiting in a handoff.
const handoffBudget = 4 << 20

func newHandoff(t *tree) *handoff {
	files := 0
	for _, e := range t.entries {
		if !e.dir {
			files++
		}
	}
	return &handoff{files: make(chan fileData, files), budget: handoffBudget}
}

// give hands over the next file, or asks the receiver to read it again. It
// reports whether the receiver owns fd.data now.
func (h *handoff) give(fd fileData) bool {
	if fd.err != nil || fd.big || h.inFlight.Load()+int64(len(fd.data)) > h.budget {
		h.files <- fileData{big: true, err: errReadAgain}
		return false
	}
	h.inFlight.Add(int64(len(fd.data)))
	h.files <- fd
	return true
}

// done tells the receiver that no more files come: it reads the rest itself.
func (h *handoff) done() { close(h.files) }

// take returns the next file handed over, reading it from path when the
// giver could not hand it over.
func (h *handoff) take(path string) fileData {
	fd, ok := <-h.files
	if !ok || errors.Is(fd.err, errReadAgain) {
		return readFile(path)
	}
	h.inFlight.Add(-int64(len(fd.data)))
	return fd
}

// errReadAgain marks a file a handoff did not carry.
var errReadAgain = errors.New("read the file again")

// freeBufs recycles the read-ahead buffers of small files; it is bounded,
// so reading never holds more than about lookahead files.
var freeBufs = make(chan []byte, lookahead+readers)

const keepBuf = 64 << 10 // buffers bigger than this are not recycled

func getBuf(size int) []byte {
	select {
	case b := <-freeBufs:
		if cap(b) >= size {
			return b[:size]
		}
	default:
	}
	return make([]byte, size, max(size, 4<<10))
}

// putBuf recycles a file's buffer.
func putBuf(b []byte) {
	if cap(b) > keepBuf {
		return
	}
	select {
	case freeBufs <- b[:0]:
	default:
	}
}

// writeTar writes the uncompressed tar stream of t to w.
func (a *archiver) writeTar(t *tree, w io.Writer) error {
	if a.handoff != nil {
		defer a.handoff.done()
	}
	if t.mem {
		return a.writeStream(t, w, func(e entry) fileData { return fileData{data: e.data, mode: e.mode, pinned: true} })
	}
	// Readers fill the slot of a file's ordinal, at most lookahead files ahead
	// of the writer, which queues one more job per file it takes; so the
	// ordinal k+lookahead is queued only once slot k is emptied and a ring of
	// lookahead slots suffices.
	var ring [lookahead]chan fileData
	for i := range ring {
		ring[i] = make(chan fileData, 1)
	}
	type job struct{ entry, ordinal int }
	jobs := make(chan job, lookahead)
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			for j := range jobs {
				ring[j.ordinal%lookahead] <- readFile(t.src(t.entries[j.entry]))
			}
		})
	}
	defer wg.Wait()
	defer close(jobs)
	next, queued := 0, 0 // the next entry to look at, files queued so far
	queue := func() {
		for ; next < len(t.entries); next++ {
			if !t.entries[next].dir {
				jobs <- job{next, queued}
				next++
				queued++
				return
			}
		}
	}
	for range lookahead {
		queue()
	}

	taken := 0
	return a.writeStream(t, w, func(entry) fileData {
		fd := <-ring[taken%lookahead]
		taken++
		queue()
		return fd
	})
}

// writeTarFrom writes the uncompressed tar stream of t to w with the files
// another pass hands over through h.
func (a *archiver) writeTarFrom(t *tree, w io.Writer, h *handoff) error {
	return a.writeStream(t, w, func(e entry) fileData { return h.take(t.src(e)) })
}

// writeStream writes the tar stream of t to w, with next giving the content
// of every file in order.
func (a *archiver) writeStream(t *tree, w io.Writer, next func(entry) fileData) error {
	tw := tar.NewWriter(w)
	a.size, a.inputs = 0, nil
	for _, e := range t.entries {
		if e.dir {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e.name, Mode: 0o755}); err != nil {
				return a.fileErr(e, err)
			}
			continue
		}
		fd := next(e)
		var err error
		switch {
		case fd.err != nil:
			err = a.fileErr(e, fd.err)
		case fd.big:
			if a.handoff != nil {
				a.handoff.give(fd)
			}
			err = a.streamFile(tw, t, e)
		default:
			if err = a.account(e, int64(len(fd.data))); err == nil {
				err = a.writeFile(tw, e, fd.mode, fd.data)
			}
			if !fd.pinned && (a.handoff == nil || !a.handoff.give(fd)) {
				putBuf(fd.data)
			}
		}
		if err != nil {
			return err
		}
	}
	if a.checkSecrets {
		if err := a.inputs.check(a.display, t.entries); err != nil {
			return err
		}
	}
	return tw.Close()
}

// streamFile copies a big file into the archive without holding it in
// memory. Manifests that big are not checked for Secrets (kustomize-controller
// would not apply a multi-megabyte manifest file either).
func (a *archiver) streamFile(tw *tar.Writer, t *tree, e entry) error {
	f, err := os.Open(t.src(e))
	if err != nil {
		return a.fileErr(e, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return a.fileErr(e, err)
	}
	if err := a.account(e, fi.Size()); err != nil {
		return err
	}
	if a.onFile != nil {
		data, err := io.ReadAll(f)
		if err != nil {
			return a.fileErr(e, err)
		}
		return a.writeFile(tw, e, normalMode(fi.Mode()), data)
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: normalMode(fi.Mode()), Size: fi.Size()}); err != nil {
		return a.fileErr(e, err)
	}
	n, err := io.Copy(tw, f)
	if err == nil && n != fi.Size() {
		err = fmt.Errorf("file changed while being read (%d bytes, then %d)", fi.Size(), n)
	}
	if err != nil {
		return a.fileErr(e, err)
	}
	return nil
}

func (a *archiver) writeFile(tw *tar.Writer, e entry, mode int64, data []byte) error {
	if a.checkSecrets {
		if line, obj := plaintextSecret(e.name, data); line > 0 {
			return &FileError{Path: filepath.Join(a.display, filepath.FromSlash(e.name)), Line: line, Err: fmt.Errorf("%s: %w", obj, ErrPlaintextSecret)}
		}
		if err := sensitiveOutput(a.display, e.name, data); err != nil {
			return err
		}
		a.inputs.add(e.name, data)
	}
	if a.onFile != nil {
		a.onFile(e.name, mode, data)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: mode, Size: int64(len(data))}
	if err := tw.WriteHeader(hdr); err != nil {
		return a.fileErr(e, err)
	}
	if _, err := tw.Write(data); err != nil {
		return a.fileErr(e, err)
	}
	return nil
}

// readFile returns the mode and content of path in a pooled buffer, read
// with inputfile.ReadRegular (open, fstat, one read, close: no os.File, whose
// registration with the poller would cost more than the read for small
// manifests); files over inlineLimit are only marked, for the writer to
// stream.
func readFile(path string) fileData {
	c, err := inputfile.ReadRegular(path, inlineLimit, getBuf)
	switch {
	case err != nil:
		return fileData{err: err}
	case !c.Mode.IsRegular():
		return fileData{err: fmt.Errorf("%w (%s)", ErrSpecialFile, c.Mode.Type())}
	case c.Size > inlineLimit:
		return fileData{big: true}
	}
	return fileData{data: c.Data, mode: normalMode(c.Mode)}
}

func (a *archiver) fileErr(e entry, err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &FileError{Path: filepath.Join(a.display, filepath.FromSlash(e.name)), Err: err}
}

// contentDigest hashes the uncompressed tar stream of t: the cheap identity
// of an artifact's content, compared before anything is sent. It leaves the
// stream's length in a.streamed.
func (a *archiver) contentDigest(t *tree) (v1.Hash, error) {
	h := sha256.New()
	n := &countWriter{w: h}
	if err := a.writeTar(t, n); err != nil {
		return v1.Hash{}, err
	}
	a.streamed = n.n
	return hashOf(h), nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// compressing is a layer being archived and compressed by a pass of its own.
type compressing struct {
	done    chan struct{}
	out     chunks
	zhash   hash.Hash
	content v1.Hash // of the uncompressed stream this pass compressed
	err     error
	abort   chan struct{}
	once    sync.Once
}

// wait returns the compressed bytes, their digest and the digest of the
// uncompressed stream they hold.
func (c *compressing) wait() (*chunks, v1.Hash, v1.Hash, error) {
	<-c.done
	return &c.out, hashOf(c.zhash), c.content, c.err
}

// discard stops the compression, waits for it to end and frees the layer.
func (c *compressing) discard() {
	c.once.Do(func() { close(c.abort) })
	<-c.done
	c.out.close()
}

// startCompress archives t on other goroutines and gzips the stream (see
// newGzip). The files are read ahead by writeTar's readers while the writing
// goroutine compresses, so reading and compressing use separate cores. With
// spill, a big layer is kept in a temporary file (see chunks).
//
// With h, the files come from the pass that hands them over through h
// instead: Push hashes the tree at reading speed while this pass runs at
// gzip's behind it, and throws it away when the hash shows the tag already
// holds the content.
func (a *archiver) startCompress(t *tree, spill bool, h *handoff) *compressing {
	c := &compressing{done: make(chan struct{}), zhash: sha256.New(), abort: make(chan struct{}), out: chunks{spill: spill}}
	go func() {
		defer close(c.done)
		content := sha256.New()
		gz, err := newGzip(io.MultiWriter(&c.out, c.zhash))
		if err != nil {
			c.err = err
			return
		}
		tarTo := io.MultiWriter(content, abortWriter{gz, c.abort})
		if h != nil {
			err = a.writeTarFrom(t, tarTo, h)
		} else {
			err = a.writeTar(t, tarTo)
		}
		if err == nil {
			err = gz.Close()
		}
		c.content, c.err = hashOf(content), err
	}()
	return c
}

// gzipLevel is the layer's compression level: 6, compress/gzip's default,
// which fluxcd/pkg/tar and so `flux build artifact` use.
const gzipLevel = 6

// newGzip returns the layer's compressor: github.com/klauspost/compress's
// gzip at the version go.mod pins, not the standard library's, whose output
// changes with the Go release that builds fluxpack (Go 1.27's differs from
// Go 1.26's), so the layer's bytes depend on the tree and go.mod alone.
// klauspost/compress v1.19.2 writes what Go 1.27's compress/gzip writes at
// this level; TestBuildGoldenDigests fails if its output changes. The header
// is compress/gzip's with nothing set, as fluxcd/pkg/tar writes it: no name,
// comment or extra field, no mtime, no level hint, OS unknown (255). ModTime
// is set to the Unix epoch, which writes an MTIME of 0: left at the zero
// time.Time, klauspost would write that time's seconds, truncated.
func newGzip(w io.Writer) (*gzip.Writer, error) {
	gz, err := gzip.NewWriterLevel(w, gzipLevel)
	if err != nil {
		return nil, fmt.Errorf("creating gzip writer: %w", err)
	}
	gz.ModTime = time.Unix(0, 0)
	return gz, nil
}

var errAborted = errors.New("compression aborted")

// abortWriter fails every write once abort is closed, which ends writeTar.
type abortWriter struct {
	w     io.Writer
	abort <-chan struct{}
}

func (w abortWriter) Write(p []byte) (int, error) {
	select {
	case <-w.abort:
		return 0, errAborted
	default:
		return w.w.Write(p)
	}
}

// compress archives t and waits for the layer.
func (a *archiver) compress(t *tree) (*memLayer, error) {
	b, d, content, err := a.startCompress(t, false, nil).wait()
	if err != nil {
		return nil, err
	}
	return &memLayer{data: b, digest: d, content: content}, nil
}

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}
}
