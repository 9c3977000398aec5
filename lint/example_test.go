package lint_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// A custom resource in the layer that holds its CRD: lint names the race
// and where the object is, and fails (Report.Failing).
func ExampleStack() {
	b := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("crds", layering.Path("./crds-and-crs"), layering.KeepOnDelete())
	rep, err := lint.Stack(context.Background(), b, "testdata/example")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failing findings:", rep.Failing())
	for _, f := range rep.Findings {
		fmt.Println(f)
	}
	// Output:
	// failing findings: 1
	// crds-and-crs/store.yaml:1: layer "crds": SecretStore/default/vault: the CRD of SecretStore (external-secrets.io) is only in this same layer: give the CRDs their own layer (prune: false, wait: true) and make this one depend on it [crd-order]
}

// Namespaces, then CRDs, then custom resources no webhook checks: lint
// finds nothing wrong, and hints that one Kustomization would do, as
// kustomize-controller applies Namespaces and CRDs first and waits until
// the CRDs are established. Each dependsOn edge it removes from the
// critical path saves up to --requeue-dependency (30s) in stock Flux.
func ExampleReport_Merges() {
	b := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("namespaces").
		Then("crds", layering.KeepOnDelete()).
		Then("crs")
	rep, err := lint.Stack(context.Background(), b, "testdata/merge")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("failing findings:", rep.Failing())
	for _, m := range rep.Merges() {
		fmt.Printf("merge %v into %q: %d edges, the critical path loses %d: up to %s\n",
			m.Layers, m.Into(), m.Edges, m.CriticalEdges, time.Duration(m.CriticalEdges)*layering.DefaultRequeueDependency)
	}
	// Output:
	// failing findings: 0
	// merge [namespaces crds crs] into "crs": 2 edges, the critical path loses 2: up to 1m0s
}
