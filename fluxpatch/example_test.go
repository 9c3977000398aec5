package fluxpatch_test

import (
	"fmt"
	"time"

	"github.com/fluxpack/fluxpack/fluxpatch"
)

// For a Flux you may change: the patch that makes kustomize-controller
// look at a Kustomization's dependencies every 5s instead of 30s, as the
// kustomization.yaml of flux bootstrap's flux-system folder.
func ExampleRender() {
	o := fluxpatch.DefaultOptions()
	o.Controllers = []fluxpatch.Controller{fluxpatch.KustomizeController}
	out, err := fluxpatch.Render(o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))

	o.RequeueDependency = 100 * time.Millisecond
	_, err = fluxpatch.Render(o)
	fmt.Println(err)
	// Output:
	// # flux-system/kustomization.yaml as flux bootstrap writes it, with patches that
	// # set --requeue-dependency=5s on kustomize-controller.
	// # Optional (rendered by fluxpack): if yours has patches already, add these.
	// apiVersion: kustomize.config.k8s.io/v1beta1
	// kind: Kustomization
	// patches:
	// - patch: |
	//     - op: add
	//       path: /spec/template/spec/containers/0/args/-
	//       value: --requeue-dependency=5s
	//   target:
	//     kind: Deployment
	//     name: kustomize-controller
	// resources:
	// - gotk-components.yaml
	// - gotk-sync.yaml
	// writing the Flux patch: requeue dependency 100ms: must be at least 1s
}
