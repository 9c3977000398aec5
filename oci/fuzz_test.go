package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// tarOf writes entries (name → content; a name ending in "/" is a directory,
// "name -> target" a symlink) as an uncompressed tar stream.
func tarOf(entries ...string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		switch {
		case strings.Contains(e, " -> "):
			name, target, _ := strings.Cut(e, " -> ")
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
		case strings.HasSuffix(e, "/"):
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e, Mode: 0o755})
		default:
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e, Mode: 0o644, Size: int64(len(e))})
			tw.Write([]byte(e))
		}
	}
	tw.Close()
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// fuzzLimit bounds what the fuzz targets unpack, so that a header announcing
// a big (sparse) file costs a fuzzing worker little; MaxPullSize is checked
// by the bad-input corpus.
const fuzzLimit = 1 << 20

// FuzzExtract feeds arbitrary tar streams to Pull's extraction: it must never
// write outside the target directory, never leave a symlink, and on error
// leave nothing behind.
func FuzzExtract(f *testing.F) {
	f.Add(tarOf("./", "a.yaml", "dir/", "dir/b.yaml"))
	f.Add(tarOf("../escape.yaml"))
	f.Add(tarOf("/abs.yaml"))
	f.Add(tarOf("dir/../../up.yaml"))
	f.Add(tarOf("link -> /etc/passwd"))
	f.Add(tarOf("a.yaml", "a.yaml/"))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sandbox := t.TempDir()
		dir := filepath.Join(sandbox, "out")
		_, err := extract(t.Context(), bytes.NewReader(gz(data)), dir, fuzzLimit)
		des, rerr := os.ReadDir(sandbox)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if len(des) != 0 {
				t.Fatalf("failed extraction (%v) left %v behind", err, des)
			}
			return
		}
		if len(des) != 1 || des[0].Name() != "out" {
			t.Fatalf("extraction wrote beside the target: %v", des)
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extraction left %s of type %s", p, d.Type())
			}
			return nil
		})
	})
}

// FuzzParseRef checks that reference parsing never panics and that what it
// accepts prints back to an equivalent reference.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"oci://ghcr.io/acme/platform:v1", "oci://127.0.0.1:5000/a/b@sha256:" + strings.Repeat("a", 64),
		"oci://localhost/x", "oci://", "https://ghcr.io/x:v1", "oci://host/UPPER:v1", "oci://host/x:bad tag", "oci://user:pass@host/x:v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := ParseRef(s)
		if err != nil {
			// Userinfo is what comes before an "@" with no "/" on the way
			// (after the scheme); "/pass@0" holds none. The error may show
			// the rest of the reference, quoted, which can hold the same
			// text ("s@/s@", or "0@/\x00@" once quoted): it must not show
			// it more often than the quoted rest does.
			rest := strings.TrimPrefix(s, "oci://")
			if at := strings.Index(rest, "@"); at > 0 && !strings.Contains(rest[:at], "/") &&
				strings.Count(err.Error(), rest[:at]+"@") > strings.Count(strconv.Quote(rest[at+1:]), rest[:at]+"@") {
				t.Fatalf("error shows the credentials of %q: %v", s, err)
			}
			return
		}
		again, err := ParseRef(ref.String())
		if err != nil {
			t.Fatalf("%q parsed as %q, which does not parse: %v", s, ref, err)
		}
		if again != ref {
			t.Fatalf("%q: %q then %q", s, ref, again)
		}
	})
}

// FuzzPlaintextSecret checks the Secret detector never panics and points at
// a line of its input.
func FuzzPlaintextSecret(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Secret\ndata:\n  a: ENC[x]\nsops: {}\n"))
	f.Add([]byte("---\n- kind: Secret\n---\nkind: Secret\napiVersion: v1\ndata: [1]\n"))
	f.Add([]byte("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"dg==\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		line, obj := plaintextSecret("f.yaml", data)
		if line < 0 || line > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("line %d outside the input (%d lines)", line, bytes.Count(data, []byte("\n"))+1)
		}
		if (line > 0) != (obj != "") {
			t.Fatalf("line %d with object %q", line, obj)
		}
	})
}

// FuzzRedaction checks that credentials written into an artifact URL, with
// or without the oci:// scheme, never show in what parsing it returns.
func FuzzRedaction(f *testing.F) {
	f.Add("hunter2", "ghcr.io/acme/platform:v1")
	f.Add("s3cr3t", "127.0.0.1:5000/a b:v1")
	f.Add("tok:en", "localhost/x@sha256:abc")
	f.Add("pw", "")
	f.Fuzz(func(t *testing.T, secret, rest string) {
		if len(secret) < 4 || strings.ContainsAny(secret, "/@") || strings.Contains(rest, secret) || strings.Contains(strconv.Quote(rest), secret) || strings.Contains("oci://ci:@", secret) {
			return // not a secret the URL delimits, or one the rest shows anyway (%q escapes too)
		}
		for _, u := range []string{"oci://ci:" + secret + "@" + rest, "ci:" + secret + "@" + rest, "oci://" + secret + "@" + rest} {
			_, err := ParseRef(u)
			if err == nil {
				t.Fatalf("%q parsed", u)
			}
			_, rerr := List(t.Context(), u)
			for _, s := range []string{err.Error(), rerr.Error(), redactRef(u)} {
				if strings.Contains(s, secret) {
					t.Fatalf("%q: %q shows the secret", u, s)
				}
			}
		}
	})
}

// FuzzIgnorer checks the walk's hand-written matcher against fluxcd/pkg/
// sourceignore's on any root .sourceignore, caller's patterns and path: an
// entry is left out exactly when sourceignore, applied top-down (an excluded
// directory's contents excluded), leaves it out.
func FuzzIgnorer(f *testing.F) {
	f.Add("*.yaml\n!keep.yaml", "", "apps/keep.yaml", false)
	f.Add("", "a/\n!a/b", "a/b", true)
	f.Add("/team\n**/sub/", "!.git", "x/sub/y.json", false)
	f.Add("[", "*.png ", "logo.png", false)
	f.Add("#c\n\\#x", "team/**/e.json", "team/q/e.json", false)
	f.Fuzz(func(t *testing.T, rootIgnore, user, path string, isDir bool) {
		parts := strings.Split(path, "/")
		for _, p := range parts {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "\x00\\") || len(parts) > 8 {
				return
			}
		}
		if len(rootIgnore)+len(user) > 4096 {
			return
		}
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, ".sourceignore"), []byte(rootIgnore), 0o644); err != nil {
			t.Fatal(err)
		}
		userPatterns := strings.Split(user, "\n")
		ig := newIgnorer(root, userPatterns)
		fr := ig.rootFrame()
		if err := ig.load(fr, root, true); err != nil {
			t.Fatal(err)
		}
		got := false
		for i, name := range parts {
			last := i == len(parts)-1
			if ig.excluded(fr, name, !last || isDir) {
				got = true
				break
			}
			if !last {
				fr = ig.child(fr, name)
				if err := ig.load(fr, filepath.Join(root, "absent"), false); err != nil {
					t.Fatal(err)
				}
			}
		}

		domain := strings.Split(filepath.Clean(root), string(filepath.Separator))
		ps := sourceignore.ReadPatterns(strings.NewReader(strings.Join(DefaultIgnorePaths(), "\n")), domain)
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(rootIgnore), domain)...)
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(user), domain)...)
		m := sourceignore.NewMatcher(ps)
		want := false
		for i := range parts {
			last := i == len(parts)-1
			if m.Match(append(slices.Clip(domain), parts[:i+1]...), !last || isDir) {
				want = true
				break
			}
		}
		if got != want {
			t.Fatalf("root .sourceignore %q, patterns %q, %s (dir %t): fluxpack excludes %t, sourceignore %t", rootIgnore, user, path, isDir, got, want)
		}
	})
}

// FuzzSumTar feeds arbitrary tar streams to Diff's reading of a remote
// layer: it must not panic, and when Pull's extraction accepts the same
// stream, every file extracted must have the sum Diff computed.
func FuzzSumTar(f *testing.F) {
	f.Add(tarOf("./", "a.yaml", "dir/", "dir/b.yaml"))
	f.Add(tarOf("a.yaml", "a.yaml"))
	f.Add(tarOf("./dir//x.yaml", "link -> a.yaml"))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		z := gz(data)
		sums, err := sumTar(bytes.NewReader(z), fuzzLimit)
		if err != nil {
			return
		}
		dir := filepath.Join(t.TempDir(), "out")
		if _, err := extract(t.Context(), bytes.NewReader(z), dir, fuzzLimit); err != nil {
			return
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := sums[filepath.ToSlash(rel)]
			if !ok {
				t.Fatalf("extracted %s, which Diff does not list (it lists %d entries)", rel, len(sums))
			}
			if s.sum != sha256.Sum256(b) {
				t.Fatalf("%s: Diff's sum differs from the extracted file's", rel)
			}
			return nil
		})
	})
}

// FuzzManifest checks that reading a registry's manifest, whatever its
// bytes, never panics and finds a Flux layer only in a Flux artifact.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.cncf.flux.config.v1+json","size":1,"digest":"sha256:` + strings.Repeat("a", 64) + `"},"layers":[{"mediaType":"application/vnd.cncf.flux.content.v1.tar+gzip","size":1,"digest":"sha256:` + strings.Repeat("b", 64) + `","annotations":{"dev.fluxpack.content.digest":"sha256:c"}}]}`))
	f.Add([]byte(`{"schemaVersion":2,"config":{"mediaType":"application/vnd.cncf.flux.config.v1+json"},"layers":[]}`))
	f.Add([]byte(`{"layers":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		desc := &remote.Descriptor{Manifest: data}
		desc.MediaType = types.OCIManifestSchema1
		l := fluxLayer(desc)
		if l != nil && l.MediaType != ContentMediaType {
			t.Fatalf("layer of media type %q taken for Flux content", l.MediaType)
		}
		if l == nil && remoteContentDigest(desc) != "" {
			t.Fatal("digests of a manifest that is not a Flux artifact")
		}
	})
}

// FuzzParseRetryAfter checks that no Retry-After a registry sends makes a
// request wait longer than maxRetryAfter or a negative time.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "120", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if !ok {
			return
		}
		if _, err := strconv.Atoi(v); err == nil && (d < 0 || d > maxRetryAfter) {
			t.Fatalf("Retry-After %q: wait %s", v, d)
		}
	})
}
