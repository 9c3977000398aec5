package fleet_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Two clusters run one stack, each with its own variables, one without a
// layer; pushing them again uploads nothing. Here against
// go-containerregistry's in-process registry.
func Example() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dir, _ := os.MkdirTemp("", "platform")
	defer os.RemoveAll(dir)
	for name, data := range map[string]string{
		"stack.yaml": `apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata: {name: platform}
spec:
  source: {url: oci://placeholder/platform}
  layers:
    - {name: namespaces, path: ./namespaces}
    - {name: apps, path: ./apps, dependsOn: [namespaces]}
`,
		"namespaces/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
		"apps/app.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: apps\ndata:\n  env: ${env}\n",
	} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		_ = os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	f := fleet.New("platform", func() (*layering.Builder, error) { return stackfile.Load(filepath.Join(dir, "stack.yaml")) },
		"oci://"+host+"/platform/{{cluster}}:main").
		Cluster("staging", fleet.ExtraVars(map[string]string{"env": "staging"})).
		Cluster("prod", fleet.ExtraVars(map[string]string{"env": "prod"}), fleet.Disable("namespaces"))

	ctx := context.Background()
	for range 2 {
		res, err := fleet.Push(ctx, f, fleet.Jobs(2), fleet.WithPushOptions(oci.WithInsecure(), oci.WithSource("https://github.com/acme/platform")))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range res {
			fmt.Println(r.Cluster, r.Status, strings.TrimPrefix(r.URL, "oci://"+host))
		}
	}
	// Output:
	// staging pushed /platform/staging:main
	// prod pushed /platform/prod:main
	// staging unchanged /platform/staging:main
	// prod unchanged /platform/prod:main
}
