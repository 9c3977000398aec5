package fluxrepo_test

import (
	"context"
	"fmt"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

// Lint reads a cluster's Flux tree from its entry point and lints it as a
// stack. This is seed 002's order: the ClusterSecretStores wait for the
// CRDs, but not for the operator whose webhook validates them. Files are
// relative to the repository's root.
func ExampleLint() {
	root := "testdata/repos/helm-operators"
	report, err := fluxrepo.Lint(context.Background(), root+"/clusters/naive", fluxrepo.WithRoot(root))
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

// Read follows the tree from its entry point: flux bootstrap's
// flux-system applies clusters/naive, whose Kustomizations apply the
// folders of infrastructure/, each a layer with the file and line that
// declares it and the objects it applies.
func ExampleRead() {
	root := "testdata/repos/helm-operators"
	repo, err := fluxrepo.Read(context.Background(), root+"/clusters/naive", fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	for i, l := range repo.Plan.Layers {
		fmt.Printf("%s:%d: %s dependsOn=%v objects=%d\n", l.File, l.Line, l.Name, l.DependsOn, len(repo.Inputs[i].Objects))
	}
	// Output:
	// clusters/naive/flux-system/gotk-sync.yaml:12: flux-system dependsOn=[] objects=6
	// clusters/naive/infrastructure.yaml:1: namespaces dependsOn=[] objects=1
	// clusters/naive/infrastructure.yaml:12: crds dependsOn=[namespaces] objects=2
	// clusters/naive/infrastructure.yaml:27: operator dependsOn=[namespaces] objects=2
	// clusters/naive/infrastructure.yaml:42: crs dependsOn=[crds] objects=1
}
