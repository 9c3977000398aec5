// Package fluxbuild answers one question for the rest of fluxpack: what
// would kustomize-controller apply for this Flux Kustomization from this
// source tree? Preview, lint and the reading of existing Flux repositories
// all ask it here, and nowhere else.
//
//	objs, err := fluxbuild.Build(ctx, fluxbuild.Source{Dir: "."}, ks)
//	for _, o := range objs {
//		fmt.Println(o.File, o.Line, o) // apps/web.yaml 3 Deployment/apps/web
//	}
//	yaml, err := fluxbuild.Preview(ctx, src, ks, substitute.WithVarsFrom("vars.yaml"))
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
// Preview adds what the controller does after the build (postBuild
// substitution, its labels, commonMetadata; package substitute) and prints
// the objects as `flux build kustomization --dry-run` does, byte for byte
// (TestPreviewAgainstFlux, FuzzPreviewVsFlux).
//
// The package reads files and never writes or touches the network: a
// kustomization entry kustomize would fetch is an error (ErrRemote).
// Problems in a file are *FileError with the line.
package fluxbuild
