// Package substitute is kustomize-controller's spec.postBuild, offline: the
// variables a Kustomization provides, their substitution into built
// objects exactly as Flux does it, and static checks that find at file:line
// what Flux would fail on or silently retype.
//
//	src, err := substitute.ReadSources("vars/configmap-cluster-vars.yaml")
//	s, err := substitute.NewSubstituter(ks, substitute.WithSources(src))
//	changed, err := s.Resource(res) // res: a kustomize resource of the build
//
// Substituting (Substituter, Vars, Render) follows fluxcd/pkg/kustomize's
// SubstituteVariables step for step, with fluxcd/pkg/envsubst: re-serialise,
// honour the kustomize.toolkit.fluxcd.io/substitute: disabled label or
// annotation, load substituteFrom in order (optional ones may be missing),
// let the inline substitute map win, strip newlines from values, validate
// every variable name (ValidVarName), honour substituteStrategy, and fail
// on a variable without a value or default (strict, as kustomize-controller
// ≥ v1.9; WithStrict(false) is `flux build` without --strict-substitute).
// Render does the rest of what the controller does after a build (Flux's
// labels, commonMetadata) and prints the objects as `flux build` does;
// package fluxbuild's Preview builds and calls it. substitute/flux_diff_test.go
// runs the same cases through Flux's own code.
//
// Check and CheckDocs find what Flux would fail on or silently retype: a
// variable no source provides, an invalid variable name, a value YAML 1.1
// retypes where it is substituted unquoted, $var without braces and
// shell-style ${VAR} in scripts; CheckKustomization and CheckSources check
// an inline substitute map and the keys of substituteFrom sources.
//
// Errors name the file and line (*FileError) or the object (*ObjectError)
// and wrap the sentinels of this package for errors.Is. No error, log line
// or String method ever shows a value loaded from a Secret. The package
// builds nothing (package fluxbuild) and reads no IaC outputs (package
// outputs).
package substitute
