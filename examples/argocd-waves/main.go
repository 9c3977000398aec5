// Command argocd-waves renders seed 004's Argo CD bootstrap order with
// package layering: sync waves become layers, each wave depending on the one
// before (-2: external-dns and external-secrets, -1: ingress-nginx, 0: the
// rest), and each release creates its namespace, as the Applications'
// CreateNamespace=true sync option does. platform/stack.yaml is the same
// stack as a stack file.
//
//	go run ./examples/argocd-waves
package main

import (
	"fmt"
	"io"
	"os"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/fluxpack/fluxpack/layering"
)

// waves are Argo CD's sync waves, lowest first.
var waves = [][]struct{ name, repo, version, namespace string }{
	{{"external-dns", "external-dns", "1.x", "external-dns"}, {"external-secrets", "external-secrets", "0.x", "external-secrets"}},
	{{"ingress-nginx", "ingress-nginx", "4.x", "ingress-nginx"}},
	{{"kube-prometheus-stack", "prometheus-community", "70.x", "monitoring"}, {"aws-efs-csi-driver", "aws-efs-csi-driver", "3.x", "kube-system"}},
}

func stack() *layering.Builder {
	b := layering.New("bootstrap", layering.FromOCI("oci://registry.example.com/lenses/bootstrap", "v1"))
	var previous []string
	for _, wave := range waves {
		var names []string
		for _, app := range wave {
			b.Layer(app.name, layering.DependsOn(previous...),
				layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: app.name, Version: app.version, SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: app.repo}}), layering.ReleaseNamespace(app.namespace),
					// Argo CD's CreateNamespace=true sync option: without it,
					// helm-controller fails the release until the namespace exists.
					layering.CreateNamespace()))
			names = append(names, app.name)
		}
		previous = names
	}
	return b
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-waves:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	plan, err := stack().Build()
	if err != nil {
		return err
	}
	graph, err := plan.Graph(layering.GraphMermaid)
	if err != nil {
		return err
	}
	if _, err := plan.WriteTo(w); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "--- graph (mermaid)\n%s", graph)
	return err
}
