package fluxrepo_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

// Wake writes, into a folder the cluster's entry point applies, the
// objects that wake each Kustomization's dependents the moment it is
// Ready, and the Secret they read outside the repository. Run again, it
// writes nothing until a dependsOn changes; Check says whether the folder
// is current, for CI.
func ExampleWake() {
	root, _ := os.MkdirTemp("", "repo")
	defer os.RemoveAll(root)
	secrets, _ := os.MkdirTemp("", "secrets")
	defer os.RemoveAll(secrets)
	if err := os.CopyFS(root, os.DirFS("testdata/repos/helm-operators")); err != nil {
		fmt.Println(err)
		return
	}
	entry := filepath.Join(root, "clusters", "fixed")
	c := fluxrepo.WakeConfig{Dir: filepath.Join(entry, "wake"), SecretFile: filepath.Join(secrets, "wake.yaml")}
	res, err := fluxrepo.Wake(context.Background(), entry, c, fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote", res.Changed, "and the Secret", res.Wake.Receiver.Name)
	for _, r := range res.Wake.Receiver.Spec.Resources {
		fmt.Println("wakes", r.Kind, r.Name)
	}
	c.Check = true
	res, err = fluxrepo.Wake(context.Background(), entry, c, fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stale:", res.Stale())
	// Output:
	// wrote [kustomization.yaml wake.yaml objects/kustomization.yaml] and the Secret fixed-wake
	// wakes Kustomization crds
	// wakes Kustomization operator
	// wakes Kustomization crs
	// stale: false
}
