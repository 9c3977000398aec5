// Command iac-bridge renders seed 001's addons with package layering:
// Terraform's outputs reach Flux as postBuild variables (the cluster-vars
// ConfigMap, in every layer) and as per-chart values ConfigMaps (valuesFrom),
// and the addons install in the order the seed learned the hard way:
// Karpenter first, the ALB controller next, then the rest, then the apps.
// platform/stack.yaml is the same stack as a stack file.
//
//	go run ./examples/iac-bridge
package main

import (
	"fmt"
	"io"
	"os"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/fluxpack/fluxpack/layering"
)

// release is an addon installed from an OCI chart, with the values
// ConfigMap Terraform writes for it when it has one.
func release(name, namespace string, values bool) layering.StepOption {
	opts := []layering.HelmOption{layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: name})}
	if values {
		opts = append(opts, layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: name + "-values"}))
	}
	return layering.HelmRelease(append(opts, layering.ReleaseNamespace(namespace))...)
}

func stack() *layering.Builder {
	return layering.New("addons",
		layering.FromOCI("oci://registry.example.com/acme/addons", "v1"),
		layering.Vars("cluster-vars"),
		layering.ExistingNamespaces("karpenter", "external-dns", "external-secrets", "istio-system", "authentik", "headlamp", "apps"),
		// The values ConfigMaps and Secret Terraform writes before Flux.
		layering.External(
			layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "karpenter-values"},
			layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "aws-load-balancer-controller-values"},
			layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "external-dns-values"},
			layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "authentik-values"},
			layering.ObjectRef{Kind: "Secret", Namespace: "flux-system", Name: "authentik-secrets"}),
	).
		Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("karpenter", layering.HelmRelease(
			layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "karpenter"}),
			layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "karpenter-values"}),
			layering.ReleaseNamespace("karpenter"),
			layering.CRDs(helmv2.Skip),
		)).
		Then("karpenter-nodepools", layering.Path("./karpenter")).
		Then("aws-load-balancer-controller", layering.HelmRelease(
			layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "aws-load-balancer-controller", Version: "1.x", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "eks"}}),
			layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "aws-load-balancer-controller-values"}),
			layering.ReleaseNamespace("kube-system"),
		)).
		Layer("storage", layering.Path("./storage"), layering.DependsOn("karpenter-nodepools")).
		Layer("external-dns", layering.DependsOn("aws-load-balancer-controller"), release("external-dns", "external-dns", true)).
		Layer("metrics-server", layering.DependsOn("aws-load-balancer-controller"), release("metrics-server", "kube-system", false)).
		Layer("reloader", layering.DependsOn("aws-load-balancer-controller"), release("reloader", "kube-system", false)).
		Layer("authentik", layering.DependsOn("aws-load-balancer-controller", "storage"), layering.HelmRelease(
			layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "authentik"}),
			layering.ValuesFrom(helmv2.ValuesReference{Kind: "ConfigMap", Name: "authentik-values"}),
			layering.ValuesFrom(helmv2.ValuesReference{Kind: "Secret", Name: "authentik-secrets", ValuesKey: "values.yaml"}),
			layering.ReleaseNamespace("authentik"),
		)).
		Layer("apps", layering.Path("./apps"), layering.DependsOn("external-dns", "metrics-server", "reloader", "authentik"))
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "iac-bridge:", err)
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
