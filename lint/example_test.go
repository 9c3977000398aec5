package lint_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxpack/fluxpack/fluxrepo"
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

// Tree reads a cluster's Flux tree from its entry point and lints it as a
// stack. This is seed 002's order: the ClusterSecretStores wait for the
// CRDs, but not for the operator whose webhook validates them. Files are
// relative to the repository's root.
func ExampleTree() {
	root := "../fluxrepo/testdata/repos/helm-operators"
	report, err := lint.Tree(context.Background(), root+"/clusters/naive", []fluxrepo.Option{fluxrepo.WithRoot(root)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d layers, %d objects\n", report.Layers, report.Objects)
	for _, f := range report.Findings {
		if f.Fails() {
			fmt.Println(f)
		}
	}
	// The hints: layers that could be one Kustomization.
	for _, m := range report.Merges() {
		fmt.Printf("merge %v into %q: the critical path loses %d dependsOn edges\n", m.Layers, m.Into(), m.CriticalEdges)
	}
	// Output:
	// 5 layers, 14 objects
	// infrastructure/crs/clustersecretstore.yaml:1: layer "crs" (clusters/naive/infrastructure.yaml:42): ClusterSecretStore/vault-backend: operator layer "operator" serves the admission webhook of external-secrets.io clustersecretstores, but this layer does not depend on it: the custom resource races the webhook (connection refused); depend on "operator", not just on the CRDs [webhook-order]
	// merge [crds crs] into "crs": the critical path loses 1 dependsOn edges
}
