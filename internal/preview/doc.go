// Package preview holds no code: its tests hold fluxbuild.Preview (what
// `fluxpack preview` prints) to flux2's own build path — Flux's
// kustomization generator, kustomize build, SubstituteVariables with a
// client serving the sources, ResMap.Replace and the owner labels — on the
// directories of testdata/, and its benchmarks set the two side by side. It
// sits apart from package fluxbuild's own differential tests so that a
// second, independently written oracle checks the same function.
package preview
