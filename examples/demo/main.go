// Command demo runs fluxpack's main job on an embedded default, with no
// cluster and no network. It writes a small platform (External Secrets with
// its admission webhook, and an app fed by Terraform outputs), then:
//
//   - lints the hand-made layout of seed 002 (findings: the race) and
//     fluxpack's layout (clean), and draws the DAG;
//   - renders the Flux Kustomizations;
//   - starts an in-process OCI registry on 127.0.0.1 (go-containerregistry's
//     pkg/registry, blobs in a temp dir), pushes the platform, pushes it
//     again unchanged (no upload, the tag does not move), pulls it back;
//   - prints what a cluster applies: the root OCIRepository and Kustomization.
//
// Every step is a fluxpack command run in process, echoed as typed.
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

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/outputs"
)

//go:embed platform infra
var embedded embed.FS

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
	host, shutdown, err := startRegistry(filepath.Join(work, "blobs"))
	if err != nil {
		return err
	}
	defer shutdown()
	// The stack files name registry.example.com; the demo points them at
	// its own registry.
	if err := writeTree(work, strings.NewReplacer("registry.example.com", host)); err != nil {
		return err
	}
	dir := filepath.Join(work, "platform")
	fmt.Fprintf(out, "in-process OCI registry on %s, platform tree in %s\n\n", host, dir)

	// Before anything reaches a registry: the naive order races, fluxpack's
	// does not.
	if _, err := fluxpack(ctx, out, 1, "lint", "-f", filepath.Join(dir, "naive.yaml")); err != nil {
		return err
	}
	if _, err := fluxpack(ctx, out, 0, "lint", "-f", filepath.Join(dir, "stack.yaml")); err != nil {
		return err
	}
	if _, err := fluxpack(ctx, out, 0, "graph", "-f", filepath.Join(dir, "stack.yaml"), "-o", "tree"); err != nil {
		return err
	}
	// The Terraform outputs become the cluster-vars ConfigMap inside the
	// artifact; the sensitive ones a Secret kept outside it.
	secret := filepath.Join(work, "cluster-vars.secret.yaml")
	if _, err := fluxpack(ctx, out, 0, "render", "-f", filepath.Join(dir, "stack.yaml"), "-d", filepath.Join(dir, "flux"), "--secret-file", secret); err != nil {
		return err
	}

	url := "oci://" + host + "/acme/platform:v1"
	meta := []string{"--source", "https://github.com/acme/platform.git", "--revision", "main@sha1:4f5c2a1b0e9d8c7f6a5b4c3d2e1f0a9b8c7d6e5f"}
	ref, err := fluxpack(ctx, out, 0, append([]string{"push", dir, url}, meta...)...)
	if err != nil {
		return err
	}
	// The same content from a later commit: nothing is uploaded, the tag
	// does not move, so clusters see no new revision.
	again, err := fluxpack(ctx, out, 0, "push", dir, url, "--source", meta[1], "--revision", "main@sha1:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b")
	if err != nil {
		return err
	}
	if again != ref {
		return fmt.Errorf("unchanged content moved the tag: %s then %s", ref, again)
	}
	pulled := filepath.Join(work, "pulled")
	if _, err := fluxpack(ctx, out, 0, "pull", url, "-d", pulled); err != nil {
		return err
	}
	if err := sameTree(dir, pulled); err != nil {
		return err
	}
	if err := noSensitiveValues(filepath.Join(work, "infra", "terraform.json"), pulled); err != nil {
		return err
	}
	fmt.Fprintf(out, "pulled tree is identical to the pushed one, and holds no sensitive output\n\n")

	digest := ref[strings.LastIndex(ref, "@")+1:]
	fmt.Fprintf(out, "digest: %s\n\nwhat the cluster applies (source-controller reports revision v1@%s):\n", digest, digest)
	if err := printBootstrap(out, filepath.Join(dir, "flux", "source.yaml")); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nand, out of band (kubectl apply, or SOPS-encrypted in the repo), the Secret of the sensitive outputs in %s\n", filepath.Base(secret))
	return nil
}

// noSensitiveValues fails if a sensitive output of the IaC outputs file
// appears in any file under dir.
func noSensitiveValues(outputsFile, dir string) error {
	outs, err := outputs.Read(outputsFile)
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, o := range outs.List {
			if o.Sensitive && bytes.Contains(b, []byte(o.Value)) {
				return fmt.Errorf("sensitive output %s found in the pulled %s", o.Name, p)
			}
		}
		return nil
	})
}

// printBootstrap prints the two objects a cluster applies by hand: the
// rendered OCIRepository of the pushed artifact and a root Kustomization that
// applies the rendered layers in ./flux (the source among them, so the
// cluster keeps it in step with the stack file).
func printBootstrap(out io.Writer, source string) error {
	src, err := os.ReadFile(source)
	if err != nil {
		return err
	}
	root := &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: "platform-root", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 10 * time.Minute},
			Path:      "./flux",
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "platform"},
		},
	}
	b, err := sigyaml.Marshal(root)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "---\n%s---\n%s", src, stripStatus(b))
	return err
}

// fluxpack runs one fluxpack command in process, echoing it and its output,
// checks it exits with want, and returns its stdout.
func fluxpack(ctx context.Context, out io.Writer, want int, args ...string) (string, error) {
	fmt.Fprintf(out, "$ fluxpack %s\n", strings.Join(args, " "))
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, "demo", args, &stdout, &stderr)
	out.Write(stderr.Bytes())
	out.Write(stdout.Bytes())
	fmt.Fprintln(out)
	if code != want {
		return "", fmt.Errorf("fluxpack %s exited %d, want %d", args[0], code, want)
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

// writeTree writes the embedded platform and infra trees under dir, with r
// applied to their content.
func writeTree(dir string, r *strings.Replacer) error {
	return fs.WalkDir(embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(r.Replace(string(b))), 0o644)
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
