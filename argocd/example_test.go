package argocd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxpack/fluxpack/argocd"
)

// An app of apps: root applies apps/, whose Applications install
// cert-manager from its chart in wave -1, then the issuers from a path of
// the Git repository. The stack keeps the order, with cert-manager a
// HelmRelease layer and issuers a Kustomization layer that depends on it;
// what Flux cannot say is listed, with the Application's file and line.
func ExampleImport() {
	tmp, err := os.MkdirTemp("", "argocd")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "platform") // the stack is named after it
	files := map[string]string{
		"bootstrap/root.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: root
  namespace: argocd
spec:
  source:
    repoURL: https://github.com/example/platform.git
    targetRevision: main
    path: apps
  destination:
    server: https://kubernetes.default.svc
    namespace: argocd
`,
		"apps/cert-manager.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: cert-manager
  namespace: argocd
  annotations:
    argocd.argoproj.io/sync-wave: "-1"
spec:
  source:
    repoURL: https://charts.jetstack.io
    chart: cert-manager
    targetRevision: v1.14.4
    helm:
      values: |
        installCRDs: true
  destination:
    server: https://kubernetes.default.svc
    namespace: cert-manager
  syncPolicy:
    automated:
      prune: true
    syncOptions:
      - CreateNamespace=true
`,
		"apps/issuers.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: issuers
  namespace: argocd
spec:
  source:
    repoURL: https://github.com/example/platform.git
    targetRevision: main
    path: manifests/issuers
  destination:
    server: https://kubernetes.default.svc
    namespace: cert-manager
  syncPolicy:
    automated:
      prune: true
`,
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}

	imp, err := argocd.Import(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(imp.Stack))
	for _, d := range imp.Differences {
		// Differences name files as Import was given them; print them
		// relative to the app of apps.
		fmt.Println("difference:", strings.ReplaceAll(d, filepath.ToSlash(tmp)+"/", ""))
	}
	// Output:
	// apiVersion: fluxpack.dev/v1alpha1
	// kind: Stack
	// metadata:
	//   name: platform
	// spec:
	//   sourceRef:
	//     kind: GitRepository
	//     name: flux-system
	//   layers:
	//     - name: cert-manager
	//       helmRelease:
	//         chart:
	//           chart: cert-manager
	//           version: v1.14.4
	//           sourceRef:
	//             kind: HelmRepository
	//             name: charts-jetstack-io
	//         targetNamespace: cert-manager
	//         createNamespace: true
	//         values:
	//           installCRDs: true
	//     - name: issuers
	//       path: ./manifests/issuers
	//       dependsOn:
	//         - name: cert-manager
	// difference: platform/bootstrap/root.yaml:1: Application/root: the app of apps (it applies apps): the stack's root Kustomization applies the layers instead
	// difference: platform/apps/issuers.yaml:1: Application/issuers: destination.namespace cert-manager: Argo CD puts objects without a namespace there; Flux's targetNamespace would also move the others, so it is not set: give those objects their namespace
	// difference: charts come from https://charts.jetstack.io: create HelmRepository/flux-system/charts-jetstack-io for it (the stack's HelmReleases name it)
}
