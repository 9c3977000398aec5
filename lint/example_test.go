package lint_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// Custom resources in a layer that does not depend on the layer of their
// CRD: lint names the race and where the object is, and fails
// (Report.Failing). Layer starts a layer without dependencies; Then would
// have made "crs" depend on "crds".
func ExampleStack() {
	b := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("crds", layering.KeepOnDelete()).
		Layer("crs")
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
	// crs/store.yaml:1: layer "crs": SecretStore/default/vault: the CRD of SecretStore (external-secrets.io) is in layer "crds", which this layer does not depend on [crd-order]
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
