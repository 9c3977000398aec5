package oci_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fluxpack/fluxpack/oci"
)

// Push a folder of manifests as a Flux artifact, push it again unchanged
// (nothing is uploaded, the tag stays), and compare, list and pull it: here
// against go-containerregistry's in-process registry.
func Example() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	url := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/platform"

	dir, _ := os.MkdirTemp("", "platform")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "namespace.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n"), 0o644)

	ctx := context.Background()
	meta := []oci.PushOption{
		oci.WithSource("https://github.com/acme/platform"),
		oci.WithRevision("main@sha1:0123456789abcdef0123456789abcdef01234567"),
		oci.WithCreated(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)),
	}
	first, err := oci.Push(ctx, dir, url+":v1", append(meta, oci.WithTags("latest"))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pushed:", first.Pushed, first.Tags)
	again, err := oci.Push(ctx, dir, url+":v1", meta...)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pushed again:", again.Pushed, "same digest:", again.Digest == first.Digest)

	diff, err := oci.Diff(ctx, dir, url+":latest")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("diff:", diff.Status)

	tags, err := oci.List(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tags {
		fmt.Println("tag:", t.Tag, t.Revision)
	}

	out := filepath.Join(dir, "..", filepath.Base(dir)+"-pulled")
	defer os.RemoveAll(out)
	md, err := oci.Pull(ctx, url+":v1", out)
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(filepath.Join(out, "namespace.yaml"))
	fmt.Println("pulled:", md.Source, strings.Count(string(data), "\n"), "lines")
	// Output:
	// pushed: true [v1 latest]
	// pushed again: false same digest: true
	// diff: identical
	// tag: v1 main@sha1:0123456789abcdef0123456789abcdef01234567
	// tag: latest main@sha1:0123456789abcdef0123456789abcdef01234567
	// pulled: https://github.com/acme/platform 4 lines
}

// A Client made once is reused across calls: its transports and the
// registry's answers to the API check are shared, and its options (here a
// retry policy) apply to every call. A Ref is parsed once.
func ExampleClient() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dir, _ := os.MkdirTemp("", "platform")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "namespace.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n"), 0o644)

	c, err := oci.NewClient(oci.WithRetry(oci.DefaultRetry()))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, cluster := range []string{"staging", "prod"} {
		ref, err := oci.ParseRef("oci://" + host + "/platform/" + cluster + ":v1")
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := c.Push(ctx, dir, ref, oci.WithCreated(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(cluster, "pushed:", res.Pushed, "tag:", ref.Tag())
	}
	_, err = oci.ParseRef("oci://ci:hunter2@" + host + "/platform:v1")
	fmt.Println(strings.ReplaceAll(err.Error(), host, "HOST"))
	// Output:
	// staging pushed: true tag: v1
	// prod pushed: true tag: v1
	// parsing reference "oci://HOST/platform:v1": credentials in the reference are not supported: use WithCreds, $FLUXPACK_CREDS or the docker config
}
