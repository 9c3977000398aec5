package sources_test

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

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/sources"
)

// Fetch an OCIRepository whose spec.ref.semver picks the newest release,
// as source-controller would, from go-containerregistry's in-process
// registry; the second Fetcher finds the artifact in the cache.
func Example() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	url := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/platform/apps"
	ctx := context.Background()
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		dir, _ := os.MkdirTemp("", "apps")
		defer os.RemoveAll(dir)
		_ = os.WriteFile(filepath.Join(dir, "version.yaml"), []byte("version: "+v+"\n"), 0o644)
		if _, err := oci.Push(ctx, dir, url+":"+v, oci.WithSource("example"), oci.WithRevision(v), oci.WithCreated(time.Unix(0, 0))); err != nil {
			fmt.Println(err)
			return
		}
	}
	cache, _ := os.MkdirTemp("", "sources")
	defer os.RemoveAll(cache)
	repo := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec:       sourcev1.OCIRepositorySpec{URL: url, Reference: &sourcev1.OCIRepositoryRef{SemVer: "1.x"}},
	}
	for range 2 {
		f, err := sources.New(cache)
		if err != nil {
			fmt.Println(err)
			return
		}
		a, err := f.OCIRepository(ctx, repo)
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := os.ReadFile(filepath.Join(a.Dir, "version.yaml"))
		tag, digest, _ := strings.Cut(a.Revision, "@")
		fmt.Printf("%s@%s…: %s", tag, digest[:7], b)
	}
	// Output:
	// 1.1.0@sha256:…: version: 1.1.0
	// 1.1.0@sha256:…: version: 1.1.0
}
