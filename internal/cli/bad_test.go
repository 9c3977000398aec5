package cli_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestBadInput runs fluxpack on every case of the bad-input corpus,
// testdata/bad/<category>-<case>.txtar, and checks that each one
//
//   - exits 2 and prints nothing on stdout;
//   - says on stderr what testdata/bad/<case>.golden holds (-update rewrites
//     it), including every line of the case's "names" section: the object and
//     the place it is about;
//   - writes nothing: the case's work directory is byte for byte what it was
//     (no output directory, no temporary leftovers), and the registry saw no
//     request but reads.
//
// A case is a txtar archive. Its comment says what is wrong with the input.
// Its files are written to a fresh work directory, except these sections:
//
//	-- args --   fluxpack's arguments, one a line
//	-- names --  substrings stderr must hold, one a line
//	-- setup --  directives run before fluxpack, one a line (see badSetup)
//
// In all three, $WORK is the work directory and $REGISTRY the host:port of an
// in-process registry started for the case.
func TestBadInput(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "bad", "*.txtar"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 40, "the bad-input corpus shrank")
	// No credentials from the machine running the tests.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("FLUXPACK_CREDS", "")
	t.Setenv("SOURCE_DATE_EPOCH", "")

	perCategory := map[string]int{}
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		category, _, _ := strings.Cut(name, "-")
		perCategory[category]++
		t.Run(name, func(t *testing.T) { runBadCase(t, name, file) })
	}
	t.Logf("bad inputs: %d cases: %v", len(cases), perCategory)
}

func runBadCase(t *testing.T, name, file string) {
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(ar.Comment)), "%s: the comment must say what is wrong", file)

	work := t.TempDir()
	reg := testutil.NewRegistry(t)
	expand := strings.NewReplacer("$WORK", work, "$REGISTRY", reg.Host).Replace
	sections := map[string][]string{}
	for _, f := range ar.Files {
		switch f.Name {
		case "args", "names", "setup":
			sections[f.Name] = lines(expand(string(f.Data)))
		default:
			p := filepath.Join(work, filepath.FromSlash(f.Name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, f.Data, 0o644))
		}
	}
	require.NotEmpty(t, sections["args"], "%s: no args", file)
	require.NotEmpty(t, sections["names"], "%s: no names: a message must name the object and the place", file)
	for _, d := range sections["setup"] {
		badSetup(t, work, strings.Fields(d))
	}

	before := snapshot(t, work)
	reg.Reset()
	stdout, stderr, code := run(t, sections["args"]...)

	assert.Equal(t, cli.ExitError, code, "fluxpack %s: exit code; stderr:\n%s", strings.Join(sections["args"], " "), stderr)
	assert.Empty(t, stdout, "stdout")
	for _, n := range sections["names"] {
		assert.Contains(t, stderr, n, "the message names %q", n)
	}
	if diff := cmp.Diff(before, snapshot(t, work)); diff != "" {
		t.Errorf("fluxpack changed its work directory (-before +after):\n%s", diff)
	}
	for _, r := range reg.Requests() {
		if !strings.HasPrefix(r, "GET ") && !strings.HasPrefix(r, "HEAD ") {
			t.Errorf("fluxpack wrote to the registry: %s", r)
		}
	}
	got := strings.NewReplacer(work, "$WORK", reg.Host, "$REGISTRY").Replace(stderr)
	testutil.Golden(t, filepath.Join("bad", name), []byte(got))
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// badSetup runs one setup directive of a bad-input case:
//
//	symlink PATH TARGET         PATH (under $WORK) becomes a symlink to TARGET
//	fifo PATH                   PATH becomes a named pipe
//	mkdir PATH                  PATH becomes an empty directory
//	sparse PATH SIZE            PATH becomes a sparse file of SIZE bytes
//	env KEY VALUE               sets an environment variable for the case
//	fluxpack ARG...             runs fluxpack, which must succeed
//	artifact REF ENTRY...       pushes a Flux artifact whose layer holds the
//	                            entries: NAME a file, NAME/ a directory,
//	                            NAME->TARGET a symlink, NAME@SIZE a file of
//	                            SIZE zero bytes, NAME|fifo a named pipe
//	notgzip REF                 pushes a Flux artifact whose layer is not gzip
//	truncated REF               pushes a Flux artifact whose tar stream is cut short
//	image REF                   pushes a random image that is not a Flux artifact
//
// REF is host/repository:tag, without oci://.
func badSetup(t *testing.T, work string, d []string) {
	t.Helper()
	require.NotEmpty(t, d)
	at := func(p string) string { return filepath.Join(work, filepath.FromSlash(p)) }
	switch d[0] {
	case "symlink":
		require.Len(t, d, 3)
		require.NoError(t, os.MkdirAll(filepath.Dir(at(d[1])), 0o755))
		require.NoError(t, os.Symlink(d[2], at(d[1])))
	case "fifo":
		require.Len(t, d, 2)
		require.NoError(t, os.MkdirAll(filepath.Dir(at(d[1])), 0o755))
		require.NoError(t, syscall.Mkfifo(at(d[1]), 0o644))
	case "mkdir":
		require.Len(t, d, 2)
		require.NoError(t, os.MkdirAll(at(d[1]), 0o755))
	case "sparse":
		require.Len(t, d, 3)
		size, err := strconv.ParseInt(d[2], 10, 64)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(at(d[1])), 0o755))
		f, err := os.Create(at(d[1]))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
	case "env":
		require.Len(t, d, 3)
		t.Setenv(d[1], d[2])
	case "fluxpack":
		_, stderr, code := run(t, d[1:]...)
		require.Equal(t, cli.ExitOK, code, "setup: fluxpack %s: %s", strings.Join(d[1:], " "), stderr)
	case "artifact":
		require.GreaterOrEqual(t, len(d), 2)
		pushImage(t, d[1], fluxImage(t, gzipped(t, craftTar(t, d[2:]))))
	case "notgzip":
		require.Len(t, d, 2)
		pushImage(t, d[1], fluxImage(t, []byte("kind: ConfigMap\n")))
	case "truncated":
		require.Len(t, d, 2)
		full := craftTar(t, []string{"a.yaml@4096", "b.yaml"})
		pushImage(t, d[1], fluxImage(t, gzipped(t, full[:len(full)/2])))
	case "image":
		require.Len(t, d, 2)
		img, err := random.Image(64, 1)
		require.NoError(t, err)
		pushImage(t, d[1], img)
	default:
		t.Fatalf("unknown setup directive %q", strings.Join(d, " "))
	}
}

// craftTar writes the entries of an artifact directive as a tar stream.
func craftTar(t *testing.T, entries []string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		var err error
		switch {
		case strings.Contains(e, "->"):
			n, target, _ := strings.Cut(e, "->")
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: n, Linkname: target, Mode: 0o777})
		case strings.HasSuffix(e, "|fifo"):
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeFifo, Name: strings.TrimSuffix(e, "|fifo"), Mode: 0o644})
		case strings.HasSuffix(e, "/"):
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e, Mode: 0o755})
		case strings.Contains(e, "@"):
			n, s, _ := strings.Cut(e, "@")
			size, perr := strconv.ParseInt(s, 10, 64)
			require.NoError(t, perr)
			require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: size}))
			_, err = io.CopyN(tw, zeros{}, size)
		default:
			content := "# " + e + "\n"
			require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e, Mode: 0o644, Size: int64(len(content))}))
			_, err = io.WriteString(tw, content)
		}
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return b.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	require.NoError(t, err)
	_, err = zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// fluxImage is a Flux artifact (Flux's config and content media types) whose
// one layer is the given bytes.
func fluxImage(t *testing.T, layer []byte) v1.Image {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, oci.ConfigMediaType)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(layer, oci.ContentMediaType)})
	require.NoError(t, err)
	return img
}

func pushImage(t *testing.T, ref string, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img, remote.WithContext(t.Context())))
}

// snapshot describes everything under dir: each path with its type,
// permissions and content (or a symlink's target).
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%s %s", filepath.ToSlash(rel), fi.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		case d.Type().IsRegular():
			if fi.Size() > 1<<20 { // sparse giants: the size will do
				desc += fmt.Sprintf(" %d bytes", fi.Size())
				break
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + strconv.Quote(string(b))
		}
		out = append(out, desc)
		return nil
	})
	require.NoError(t, err)
	slices.Sort(out)
	return out
}
