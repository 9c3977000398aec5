// Command platform-hierarchy renders seed 003's platform with package
// layering: eight tiers, namespaces -> CRDs -> Crossplane -> EKS pod
// identities -> security -> infrastructure + observability -> apps, with
// health checks where wait does not fit, CEL health for the pod identities
// and the IaC's cluster variables in every layer. platform/stack.yaml is the
// same stack as a stack file; platform/naive.yaml, every tier at once, is
// what `fluxpack lint` refuses.
//
//	go run ./examples/platform-hierarchy
package main

import (
	"fmt"
	"io"
	"os"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/fluxpack/fluxpack/layering"
)

func stack() *layering.Builder {
	source := sourcev1.OCIRepositorySpec{
		URL:       "oci://registry.example.com/cloud-native-ref/platform",
		Reference: &sourcev1.OCIRepositoryRef{SemVer: ">=1.0.0"},
	}
	return layering.New("platform", layering.FromOCIRepository(source), layering.Vars("eks-mycluster-0-vars")).
		Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("crossplane", layering.Path("./crossplane"), layering.MarkOperator(),
			layering.HealthChecks(meta.NamespacedObjectKindReference{
				APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Name: "crossplane", Namespace: "crossplane-system",
			})).
		Then("epis", layering.Path("./epis"), layering.Wait(),
			layering.HealthCheckExprs(kustomize.CustomHealthCheck{
				APIVersion: "cloud.ogenki.io/v1alpha1", Kind: "EKSPodIdentity",
				HealthCheckExpressions: kustomize.HealthCheckExpressions{
					Current: "status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True')",
					Failed:  "status.conditions.filter(c, c.type == 'Synced').all(c, c.status == 'False')",
				},
			})).
		Then("security", layering.Path("./security")).
		Then("infrastructure", layering.Path("./infrastructure"),
			layering.Substitute(map[string]string{"gateway_class": "cilium-tailscale"})).
		Layer("observability", layering.Path("./observability"), layering.DependsOn("security")).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("infrastructure"),
			layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "app-secrets"}))
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "platform-hierarchy:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	plan, err := stack().Build()
	if err != nil {
		return err
	}
	_, err = plan.WriteTo(w)
	return err
}
