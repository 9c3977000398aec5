package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/registry"
)

// Serve a registry on a free loopback port, push a folder to it and pull it
// back, then stop the registry as an interrupt would.
func Example() {
	s, err := registry.Listen(registry.WithAddr("127.0.0.1:0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()

	dir, _ := os.MkdirTemp("", "platform")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "namespace.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n"), 0o644)
	url := "oci://" + s.Addr() + "/platform:v1"
	res, err := oci.Push(ctx, dir, url,
		oci.WithSource("https://github.com/acme/platform"),
		oci.WithRevision("main@sha1:0123456789abcdef0123456789abcdef01234567"),
		oci.WithCreated(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pushed:", res.Pushed, res.Digest)
	md, err := oci.Pull(ctx, url, filepath.Join(dir, "out"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pulled:", md.Files, "file(s), revision", md.Revision)

	stop()
	fmt.Println("stopped:", <-served)
	// Output:
	// pushed: true sha256:4531c88d48ebae6f84d6814a51210825be6ad6afefed403d05c65d742286dccf
	// pulled: 1 file(s), revision main@sha1:0123456789abcdef0123456789abcdef01234567
	// stopped: <nil>
}
