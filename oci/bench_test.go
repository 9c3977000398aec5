package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// benchFiles is the size of the benchmark tree: 5,000 YAML files, ~7.8 MB,
// ~1.3 MB compressed (the "platform repo" of Flux's measurements).
const benchFiles = 5000

var (
	benchOnce sync.Once
	benchDir  string
	benchTar  []byte // the tree's uncompressed tar stream, for the gzip floors
)

// benchTree generates the benchmark tree once per test binary.
func benchTree(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fluxpack-bench-")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := testutil.GenerateManifests(dir, benchFiles, 1); err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		var buf bytes.Buffer
		if err := tarTree(dir, &buf); err != nil {
			b.Fatal(err)
		}
		benchTar = buf.Bytes()
	})
	if benchDir == "" {
		b.Fatal("benchmark tree not generated")
	}
	return benchDir
}

// benchRegistry is the real distribution server when it is built, else the
// in-process one; the benchmark's name says which.
func benchRegistry(b *testing.B) string {
	b.Helper()
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(b), ".cache", "bin", "registry")); err == nil || os.Getenv("FLUXPACK_TOOLS") != "" || os.Getenv("FLUXPACK_REQUIRE_REAL") == "1" {
		return testutil.StartDistribution(b, testutil.DistributionOptions{}).Host
	}
	b.Log("real registry not built (make tools): using the in-process registry")
	return testutil.NewRegistry(b).Host
}

// cpuMeter starts counting the CPU time of the process (every goroutine,
// not the registry's) and returns the function that reports it per
// iteration as CPU-ms/op, once b.Loop is done. On a machine shared with other
// work the CPU time is steadier than the wall time, and it shows work done
// on other cores that the wall time hides.
func cpuMeter(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used)/float64(time.Millisecond)/float64(b.N), "CPU-ms/op")
		}
	}
}

// touches numbers the calls of touch, so no two write the same content even
// when the testing package calls a benchmark function more than once.
var touches atomic.Int64

// touch changes one file so every push has new content.
func touch(b *testing.B, dir string, i int) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, "iteration.yaml"), fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: it%d-%d}\n", i, touches.Add(1)), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBuild builds the layer of the benchmark tree with fluxpack and
// with Flux's Client.Build, and fails unless both archive the same tar
// stream (the tree has normal modes). The gzip bytes around it differ when
// the Go release's compress/gzip, which Flux uses, writes other bytes than
// fluxpack's pinned klauspost/compress.
func BenchmarkBuild(b *testing.B) {
	dir := benchTree(b)
	art, err := oci.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	tgz := filepath.Join(b.TempDir(), "flux.tgz")
	if err := fluxoci.NewClient(nil).Build(tgz, dir, oci.DefaultIgnorePaths()); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(tgz)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	_, err = io.Copy(h, zr)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	if flux := fmt.Sprintf("sha256:%x", h.Sum(nil)); flux != art.ContentDigest.String() {
		b.Fatalf("tar stream of fluxpack %s, of Flux's Client.Build %s: want them equal", art.ContentDigest, flux)
	}
	b.Run("fluxpack", func(b *testing.B) {
		report := cpuMeter(b)
		for b.Loop() {
			if _, err := oci.Build(dir); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
	b.Run("flux", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "a.tgz")
		c := fluxoci.NewClient(nil)
		report := cpuMeter(b)
		for b.Loop() {
			if err := c.Build(out, dir, oci.DefaultIgnorePaths()); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
}

func BenchmarkPushNew(b *testing.B) {
	dir := benchTree(b)
	host := benchRegistry(b)
	b.Run("fluxpack", func(b *testing.B) {
		i := 0
		report := cpuMeter(b)
		for b.Loop() {
			i++
			touch(b, dir, i)
			res, err := oci.Push(b.Context(), dir, fmt.Sprintf("oci://%s/fluxpack:new", host), oci.WithRevision(fmt.Sprint(i)))
			if err != nil || !res.Pushed {
				b.Fatal(err, res)
			}
		}
		report()
	})
	b.Run("flux", func(b *testing.B) {
		c := fluxoci.NewClient(nil)
		i := 0
		report := cpuMeter(b)
		for b.Loop() {
			i++
			touch(b, dir, 1_000_000+i)
			if _, err := c.Push(b.Context(), host+"/flux:new", dir, fluxoci.WithPushMetadata(fluxoci.Metadata{Source: "s", Revision: fmt.Sprint(i)}), fluxoci.WithPushIgnorePaths(oci.DefaultIgnorePaths()...)); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
}

func BenchmarkPushUnchanged(b *testing.B) {
	dir := benchTree(b)
	host := benchRegistry(b)
	touch(b, dir, 0)
	b.Run("fluxpack", func(b *testing.B) {
		url := fmt.Sprintf("oci://%s/fluxpack:same", host)
		if _, err := oci.Push(b.Context(), dir, url); err != nil {
			b.Fatal(err)
		}
		report := cpuMeter(b)
		for b.Loop() {
			res, err := oci.Push(b.Context(), dir, url)
			if err != nil || res.Pushed {
				b.Fatal(err, res)
			}
		}
		report()
	})
	b.Run("fluxpack-cached", func(b *testing.B) {
		// WithTreeCache, as the CLI pushes: the files were written over
		// two seconds ago (settled), so a first push fills the cache.
		url := fmt.Sprintf("oci://%s/fluxpack:cached", host)
		opt := oci.WithTreeCache(b.TempDir())
		waitSettled(b, dir)
		for range 2 {
			if _, err := oci.Push(b.Context(), dir, url, opt); err != nil {
				b.Fatal(err)
			}
		}
		report := cpuMeter(b)
		for b.Loop() {
			res, err := oci.Push(b.Context(), dir, url, opt)
			if err != nil || res.Pushed {
				b.Fatal(err, res)
			}
		}
		report()
	})
	b.Run("flux", func(b *testing.B) {
		c := fluxoci.NewClient(nil)
		meta := fluxoci.WithPushMetadata(fluxoci.Metadata{Source: "s", Revision: "r"})
		report := cpuMeter(b)
		for b.Loop() {
			if _, err := c.Push(b.Context(), host+"/flux:same", dir, meta, fluxoci.WithPushIgnorePaths(oci.DefaultIgnorePaths()...)); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
}

// waitSettled waits until the newest change to dir's files is over two
// seconds old, so that WithTreeCache caches the tree (files changed more
// recently are not cached).
func waitSettled(b *testing.B, dir string) {
	b.Helper()
	var newest time.Time
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Until(newest.Add(2*time.Second + 100*time.Millisecond)))
}

// BenchmarkFloor measures the physical limits beside the pushes: reading and
// hashing the tree (the least work that can tell "unchanged"), gzip of the
// same tar stream at the same level by Flux's compressor (compress/gzip) and
// by fluxpack's (klauspost/compress), and a raw upload of a blob of the
// compressed size.
func BenchmarkFloor(b *testing.B) {
	dir := benchTree(b)
	b.Run("tar-sha256", func(b *testing.B) {
		report := cpuMeter(b)
		for b.Loop() {
			h := sha256.New()
			if err := tarTree(dir, h); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
	b.Run("gzip-stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(benchTar)))
		report := cpuMeter(b)
		for b.Loop() {
			w := gzip.NewWriter(io.Discard)
			w.Write(benchTar)
			w.Close()
		}
		report()
	})
	b.Run("gzip-klauspost", func(b *testing.B) {
		// Level 6, fluxpack's: klauspost's default is 5.
		b.SetBytes(int64(len(benchTar)))
		report := cpuMeter(b)
		for b.Loop() {
			w, err := kgzip.NewWriterLevel(io.Discard, 6)
			if err != nil {
				b.Fatal(err)
			}
			w.Write(benchTar)
			w.Close()
		}
		report()
	})
	b.Run("blob-upload", func(b *testing.B) {
		host := benchRegistry(b)
		art, err := oci.Build(dir)
		if err != nil {
			b.Fatal(err)
		}
		layers, _ := art.Image.Layers()
		size, _ := layers[0].Size()
		repo, _ := name.NewRepository(host + "/blobs")
		blob := make([]byte, size)
		b.SetBytes(size)
		report := cpuMeter(b)
		for b.Loop() {
			rand.Read(blob)
			if err := remote.WriteLayer(repo, static.NewLayer(blob, oci.ContentMediaType)); err != nil {
				b.Fatal(err)
			}
		}
		report()
	})
}

// tarTree writes dir as a plain tar stream, as `tar c` would.
func tarTree(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		h.Name, _ = filepath.Rel(dir, p)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
