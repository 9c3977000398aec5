// Command external-secrets renders seed 000's system with package layering:
// External Secrets as a race-free chain, CRDs -> operator (wait) -> custom
// resources, the Operator preset's shape. platform/stack.yaml is the same
// stack as a stack file; platform/naive.yaml is seed 002's version, which
// `fluxpack lint` flags.
//
//	go run ./examples/external-secrets
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/fluxpack/fluxpack/layering"
)

func stack() *layering.Builder {
	return layering.New("external-secrets", layering.FromOCI("oci://registry.example.com/platform/external-secrets", "v1"),
		// The operator's Helm values, written by Terraform before Flux.
		layering.External(layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "external-secrets-values"})).
		Layer("namespaces", layering.Path("./namespaces")).
		Layer("external-secrets-crds", layering.Path("./external-secrets/crds"), layering.KeepOnDelete(), layering.Wait()).
		Then("external-secrets-operator",
			layering.DependsOn("namespaces"),
			layering.MarkOperator(),
			layering.HelmRelease(
				layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "external-secrets-chart"}),
				layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "external-secrets-values"}),
				layering.ReleaseNamespace("external-secrets"),
				layering.CRDs(helmv2.Skip),
			)).
		Layer("external-secrets-crs", layering.Path("./external-secrets/crs"),
			layering.DependsOnOperator(), layering.RetryInterval(time.Minute))
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "external-secrets:", err)
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
