// Package argocd turns an Argo CD app-of-apps into a fluxpack stack: the
// Applications of a directory, ordered by their
// argocd.argoproj.io/sync-wave annotations, become layers of the same
// bootstrap order, each wave depending on the one before it.
//
//	imp, err := argocd.Import("apps/")
//	os.WriteFile("stack.yaml", imp.Stack, 0o644)
//	for _, d := range imp.Differences { fmt.Println(d) }
//
// A chart becomes a HelmRelease layer (helm.toolkit.fluxcd.io/v2: chart,
// version, releaseName, targetNamespace, values in Argo CD's order,
// install.createNamespace), a path in a Git repository a Kustomization
// layer. Whatever Flux or the stack cannot say (value files, other
// clusters, sync options, the repositories to create) is listed in
// Differences with the file and line of the Application: nothing is
// dropped silently. The package reads files only.
package argocd
