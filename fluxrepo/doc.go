// Package fluxrepo reads an existing Flux repository the way Flux reads it,
// starting from a cluster's entry point: the folder flux bootstrap's
// flux-system Kustomization applies, typically clusters/<name>. Read builds
// the entry as kustomize-controller builds a path (package fluxbuild),
// collects the Flux Kustomizations (kustomize.toolkit.fluxcd.io/v1) it
// yields and follows each one's spec.sourceRef and spec.path, recursively,
// until the whole tree is known. The result is a layering.Plan: one layer
// per Kustomization, spec.dependsOn as its dependencies, each with the file
// and line that declares it and the objects it applies, files relative to
// the repository's root.
//
//	repo, err := fluxrepo.Read(ctx, "clusters/prod", fluxrepo.WithRoot("."))
//	defer repo.Close()
//	for i, l := range repo.Plan.Layers {
//		fmt.Println(l.File, l.Name, l.DependsOn, len(repo.Inputs[i].Objects))
//	}
//
// The reader is the bottom of the repository's readers: package lint
// checks what it reads (lint.Repository, lint.Tree), package charts
// renders its HelmReleases, package review compares two reads.
//
// Sources map to directories this way:
//
//   - GitRepository/flux-system/flux-system (DefaultSource) is the
//     repository itself: WithRoot, by default the nearest folder above the
//     entry point holding .git, or the entry point's own folder;
//   - WithSource maps any other source (a GitRepository, an
//     OCIRepository) to a local directory holding its files; an
//     OCIRepository's spec.ignore applies unless its
//     spec.layerSelector.operation is copy;
//   - a GitRepository with spec.include is laid out with the included
//     GitRepositories' artifacts moved in at their toPath, as
//     source-controller does before it packs the artifact;
//   - an ExternalArtifact made by an ArtifactGenerator of the tree is laid
//     out as source-watcher makes it (its copy rules, strategies and
//     excludes) from its sources' artifacts, as source-controller packs
//     them (.sourceignore files, spec.ignore, default exclusions);
//   - any other source is not available offline: its layers say so
//     (layering.Layer.Unavailable), and their objects are unknown, not
//     empty.
//
// Repository.Views says, for each layer, what its build sees of the
// repository: the folder it is built from and which of the repository's
// files it holds, where (View.Paths), so that a reader of the tree maps a
// file to the layers it feeds (package review's changed-only diff).
//
// A Kustomization's spec is substituted with its parent's
// spec.postBuild variables (inline, or from ConfigMaps and Secrets of the
// tree), as kustomize-controller substitutes what it applies.
//
// On that tree:
//
//   - Notes are the problems of the tree no layer has (a Kustomization
//     two parents apply, a spec its parent's variables break), which
//     lint.Repository reports with its findings;
//   - Graph draws the Kustomizations' dependency graph;
//   - Import writes the tree as a fluxpack stack file and lists, in
//     Differences, whatever the stack does not say as the repository does;
//   - Preview prints what kustomize-controller would apply for one
//     Kustomization, as `flux build kustomization --dry-run` does;
//   - PreviewRelease prints what helm-controller would install for one
//     HelmRelease (helm.toolkit.fluxcd.io/v2), its chart's CRDs then the
//     release's manifest, as `helm template` prints it.
//
// The package reads files and never touches the network or a cluster.
// Charts are not downloaded: a HelmRelease's chart is found in a source of
// the tree (a chart folder of a GitRepository) or as the charts.Finder
// given to PreviewRelease finds it; otherwise PreviewRelease fails. Objects made outside
// the repository (by Terraform, say) are declared with WithExternal.
// Options given a value they cannot use make Read fail with
// ErrInvalidOption; problems in a file are *FileError with the line.
package fluxrepo
