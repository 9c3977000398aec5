// Package bootstrap reads what a Flux repository applies before Flux: the
// bootstrap step its scripts, Makefiles and Taskfiles run (`kubectl apply
// -f`, `kubectl apply -k`, `kustomize build`, `sops --decrypt … | kubectl
// apply -f -`, `kubectl create namespace`), and its helmfiles' releases.
// Nothing is run: commands are read as text, and go-task's variables are
// expanded as far as they are known without running anything.
//
//	dirs := bootstrap.Kustomizations(root, "clusters/prod") // kustomize build DIR …
//	files := bootstrap.Manifests(root, "clusters/prod")     // kubectl apply -f FILE …
//	piped := bootstrap.Applied(root, "clusters/prod")       // … and what filters they go through
//	nss := bootstrap.Namespaces(root, "clusters/prod")      // kubectl create namespace NS
//	helmfiles := bootstrap.Helmfiles(root, "clusters/prod")
//
// Package lint takes them as what exists before the first reconcile
// (lint.WithBootstrapKustomization, WithBootstrapManifests,
// WithFilteredBootstrapManifest, WithBootstrapNamespaces, WithHelmfile),
// so that a namespace or Secret a bootstrap script creates is no finding.
package bootstrap
