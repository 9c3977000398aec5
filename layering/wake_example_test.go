package layering_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// WriteWake writes a Plan's wake objects to a folder, each file only when
// it changes, and the Secret (with the token of an earlier run) outside
// it; CheckWake compares without writing.
func ExampleWriteWake() {
	plan := &layering.Plan{Name: "prod", Namespace: "flux-system", Layers: []layering.Layer{
		{Name: "infra", Kustomization: kustomization("infra", "flux-system")},
		{Name: "apps", DependsOn: []string{"infra"}, Kustomization: kustomization("apps", "flux-system")},
	}}
	w, err := plan.WakeFor(layering.DefaultWakeTarget(plan, "./clusters/prod/wake/objects"))
	if err != nil {
		fmt.Println(err)
		return
	}
	tmp, _ := os.MkdirTemp("", "wake")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "repo", "clusters", "prod", "wake")
	secret := filepath.Join(tmp, "wake-secret.yaml")
	for range 2 {
		res, err := render.WriteWake(context.Background(), w, dir, render.WithSecretFile(secret))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("changed", res.Changed, "secret changed", res.SecretChanged)
	}
	res, err := render.CheckWake(w, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stale", res.Stale())
	// Output:
	// changed [kustomization.yaml wake.yaml objects/kustomization.yaml] secret changed true
	// changed [] secret changed false
	// stale false
}
