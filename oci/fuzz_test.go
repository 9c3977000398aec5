package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		_, err := extract(t.Context(), bytes.NewReader(gz(data)), dir)
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
		o := &options{given: map[string]bool{}}
		ref, err := parseRef(s, o)
		if err != nil {
			if strings.Contains(err.Error(), "pass@") {
				t.Fatalf("error shows credentials: %v", err)
			}
			return
		}
		again, err := parseRef(URL(ref), o)
		if err != nil {
			t.Fatalf("%q parsed as %q, which does not parse: %v", s, URL(ref), err)
		}
		if again.Name() != ref.Name() {
			t.Fatalf("%q: %q then %q", s, ref.Name(), again.Name())
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
