// Package fluxbuild answers two questions for the rest of fluxpack: what
// would kustomize-controller apply for this Flux Kustomization from this
// source tree, and what would helm-controller install for this HelmRelease
// from this chart? Preview, lint and the reading of existing Flux
// repositories all ask them here, and nowhere else.
//
//	objs, err := fluxbuild.Build(ctx, fluxbuild.Source{Dir: "."}, ks, fluxbuild.WithLogger(log))
//	for _, o := range objs {
//		fmt.Println(o.File, o.Line, o) // apps/web.yaml 3 Deployment/apps/web
//	}
//	yaml, err := fluxbuild.Preview(ctx, src, ks, substitute.WithVarsFrom("vars.yaml"))
//	rel, err := fluxbuild.RenderRelease(ctx, hr, "charts/operator", fluxbuild.WithValuesFrom(secret))
//
// Build mirrors Flux's steps: the kustomization.yaml Flux's generator
// writes for a directory without one (every .yaml/.yml file kustomize can
// read, every sub-directory holding a kustomization, minus what
// .sourceignore files and the source's own ignore rules leave out), the
// Kustomization's targetNamespace, namePrefix, nameSuffix, patches, images
// and components written into it, and kustomize's build with plugins off
// and no load restrictions, one build at a time, as Flux runs it. A plain
// directory is read without kustomize, but as kustomize reads it (read.go
// mirrors kyaml's reader and the resource factory's checks), in linear
// time and keeping every object's line; TestPlainMatchesKustomize and
// FuzzPlainMatchesKustomize hold the two to Flux's own generator and build.
// Objects kustomize builds keep the file and line its origin annotations
// name.
//
// Build takes options (Option): WithLogger logs, as warnings, the symbolic
// links it leaves out because Flux leaves them out too. WithCache keeps
// kustomize's builds in a folder across processes (ContextWithCache for
// every Build and Preview under a context): an entry is keyed by the
// kustomization and its place in the source, and taken only when every
// file, listing and path the build read gives the same answer again, so a
// base revision's tree and the working tree share their entries. It keeps
// no Secret value and writes nothing without it. WithSnapshot has the
// builds of one read of a tree, which share components, folders and
// .sourceignore files, ask the disk each of those questions once.
//
// Preview adds what the controller does after the build (postBuild
// substitution, its labels, commonMetadata; package substitute) and prints
// the objects as `flux build kustomization --dry-run` does, byte for byte
// (TestPreviewAgainstFlux, FuzzPreviewVsFlux).
//
// RenderRelease renders a HelmRelease (helm.toolkit.fluxcd.io/v2) from a
// chart folder or .tgz as helm-controller installs it: the values merged by
// helm-controller's own code (the chart's, spec.valuesFrom in order, then
// spec.values), Helm's install action in client-only dry-run mode with
// spec.releaseName, spec.targetNamespace and spec.install, then the
// post-renderers and spec.commonMetadata. The Release holds the chart's
// CRDs (per spec.install.crds) and the release's objects, each naming the
// template that made it. Its options (ReleaseOption): WithValuesFrom gives
// the ConfigMaps and Secrets valuesFrom reads, WithKubeVersion the
// version templates see, WithRedactedSecrets replaces every value taken
// from a Secret with "REDACTED" before the templates see it.
//
// The package reads files and never writes or touches the network or a
// cluster: a kustomization entry kustomize would fetch is an error
// (ErrRemote), as is a file a kustomization names by a URL, which
// kustomize would download (ErrRemoteFile), a chart is never downloaded (a chart that is not where it
// was said to be wraps ErrChartNotFound), and templates that look the
// cluster up see nothing. Options given a value they cannot use fail with
// ErrInvalidOption. Problems in a file are *FileError with the line.
package fluxbuild
