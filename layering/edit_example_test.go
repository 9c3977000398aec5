package layering_test

import (
	"fmt"

	"github.com/fluxpack/fluxpack/layering"
)

// A stack edited after it was declared, as a fleet edits it for one
// cluster: a layer left out (its dependents wait for what it waited for),
// a layer changed, the artifact replaced.
func ExampleBuilder_RemoveLayer() {
	b := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "main")).
		Layer("crds").
		Then("sandbox").
		Then("apps")
	b.RemoveLayer("sandbox")
	b.EditLayer("apps", layering.NoWait())
	b.SetArtifact("oci://registry.example.com/platform:prod")
	plan, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range plan.Layers {
		fmt.Println(l.Name, l.DependsOn, l.Kustomization.Spec.Wait)
	}
	fmt.Println(plan.Source.Spec.URL, plan.Source.Spec.Reference.Tag)
	fmt.Println(b.EditLayer("sandbox"))
	// Output:
	// crds [] true
	// apps [crds] false
	// oci://registry.example.com/platform prod
	// false
}
