// Package fluxpatch writes the patch that makes Flux's kustomize-controller
// and helm-controller look at a layer's dependencies more often than their
// default 30s (--requeue-dependency), for those who may change their Flux:
// as the kustomization.yaml of flux bootstrap's flux-system folder, or as
// a FluxInstance's spec.kustomize.patches for flux-operator.
//
//	o := fluxpatch.DefaultOptions() // both controllers, 5s, bootstrap format
//	yaml, err := fluxpatch.Render(o)
//
// Stock Flux needs no patch to bootstrap at controller speed: package
// layering's wake objects do it (layering.WakeDependents). fluxpack's
// figures for stock Flux and for this patch stand side by side.
package fluxpatch
