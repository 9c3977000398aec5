// Command demo runs fluxpack's main job on an embedded default, with no
// cluster and no network: it writes a small platform tree, starts an
// in-process OCI registry on 127.0.0.1 (go-containerregistry's pkg/registry,
// blobs in a temp dir), pushes the tree with `fluxpack push`, pushes it again
// unchanged, pulls it back with `fluxpack pull`, and prints the digest and
// the OCIRepository a cluster would apply.
//
// Run it with `make demo`.
package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/cli"
)

//go:embed platform
var platform embed.FS

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	work, err := os.MkdirTemp("", "fluxpack-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	dir := filepath.Join(work, "platform")
	if err := writeTree(dir); err != nil {
		return err
	}
	host, shutdown, err := startRegistry(filepath.Join(work, "blobs"))
	if err != nil {
		return err
	}
	defer shutdown()
	fmt.Fprintf(out, "in-process OCI registry on %s, platform tree in %s\n\n", host, dir)

	url := "oci://" + host + "/acme/platform:v1"
	meta := []string{"--source", "https://github.com/acme/platform.git", "--revision", "main@sha1:4f5c2a1b0e9d8c7f6a5b4c3d2e1f0a9b8c7d6e5f"}
	ref, err := fluxpack(ctx, out, append([]string{"push", dir, url}, meta...)...)
	if err != nil {
		return err
	}
	// The same content from a later commit: nothing is uploaded, the tag
	// does not move, so clusters see no new revision.
	again, err := fluxpack(ctx, out, "push", dir, url, "--source", meta[1], "--revision", "main@sha1:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b")
	if err != nil {
		return err
	}
	if again != ref {
		return fmt.Errorf("unchanged content moved the tag: %s then %s", ref, again)
	}
	pulled := filepath.Join(work, "pulled")
	if _, err := fluxpack(ctx, out, "pull", url, "-o", pulled); err != nil {
		return err
	}
	if err := sameTree(dir, pulled); err != nil {
		return err
	}
	fmt.Fprintf(out, "pulled tree is identical to the pushed one\n\n")

	digest := ref[strings.LastIndex(ref, "@")+1:]
	fmt.Fprintf(out, "digest: %s\n\nOCIRepository for the cluster (revision v1@%s):\n---\n", digest, digest)
	repo := &sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: "flux-system"},
		Spec: sourcev1.OCIRepositorySpec{
			URL:       "oci://" + host + "/acme/platform",
			Reference: &sourcev1.OCIRepositoryRef{Tag: "v1"},
			Interval:  &metav1.Duration{Duration: 10 * time.Minute},
			Insecure:  true, // the demo registry speaks plain HTTP
		},
	}
	b, err := yaml.Marshal(repo)
	if err != nil {
		return err
	}
	_, err = out.Write(stripStatus(b))
	return err
}

// fluxpack runs one fluxpack command in process, echoing it and its output,
// and returns its stdout.
func fluxpack(ctx context.Context, out io.Writer, args ...string) (string, error) {
	fmt.Fprintf(out, "$ fluxpack %s\n", strings.Join(args, " "))
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, "demo", args, &stdout, &stderr)
	out.Write(stderr.Bytes())
	out.Write(stdout.Bytes())
	fmt.Fprintln(out)
	if code != 0 {
		return "", fmt.Errorf("fluxpack %s exited %d", args[0], code)
	}
	return strings.TrimSpace(stdout.String()), nil
}

func startRegistry(blobs string) (string, func(), error) {
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler:           registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(blobs)), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() { _ = srv.Close() }, nil
}

func writeTree(dir string) error {
	return fs.WalkDir(platform, "platform", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, strings.TrimPrefix(p, "platform"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := platform.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// sameTree checks that two trees hold the same files with the same content.
func sameTree(a, b string) error {
	files := func(root string) (map[string]string, error) {
		m := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			c, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			m[rel] = string(c)
			return err
		})
		return m, err
	}
	fa, err := files(a)
	if err != nil {
		return err
	}
	fb, err := files(b)
	if err != nil {
		return err
	}
	if len(fa) != len(fb) {
		return fmt.Errorf("pulled %d files, pushed %d", len(fb), len(fa))
	}
	for name, content := range fa {
		if fb[name] != content {
			return errors.New("pulled file " + name + " differs")
		}
	}
	return nil
}

// stripStatus drops the empty status and creationTimestamp, as flux --export
// does.
func stripStatus(b []byte) []byte {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "status: {}" || strings.TrimSpace(l) == "creationTimestamp: null" {
			continue
		}
		lines = append(lines, l)
	}
	return []byte(strings.Join(lines, "\n"))
}
