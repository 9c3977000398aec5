// Package substitute carries cloud values made by IaC into Flux: it reads
// IaC outputs, turns them into the objects a Kustomization's
// spec.postBuild.substituteFrom and a HelmRelease's spec.valuesFrom read,
// and applies postBuild substitution exactly as kustomize-controller does,
// for offline previews and strict checks before anything reaches a cluster.
//
//	outs, err := substitute.ReadOutputs("tf.json") // terraform output -json
//	m, err := outs.Render("cluster-vars", "flux-system", nil)
//	// m.ConfigMap: the plain values; m.Secret: the sensitive ones.
//
// Reading outputs (ReadOutputs, ParseOutputs):
//
//   - Formats: Terraform and OpenTofu `output -json`, Pulumi `stack output
//     --json [--show-secrets]` (a "[secret]" placeholder is an error, not a
//     value), CloudFormation `describe-stacks`, a tofu-controller outputs
//     Secret, and plain .env, YAML or JSON maps; detected from the content
//     unless WithFormat says which.
//   - Terraform's sensitive flag is kept, every tofu-controller output is
//     sensitive, and WithSensitive marks outputs of formats that do not
//     mark secrets. Sensitive values go to the Secret only: Render refuses
//     a values map that would put one in a ConfigMap.
//   - Values are encoded once, so that Flux substitution keeps them intact:
//     strings as they are (multi-line ones as a JSON string literal, as
//     Flux deletes every newline of a value), numbers exactly as written
//     (no float rounding), booleans and null as true, false and "", lists
//     and maps as compact JSON (see Encode).
//   - Names that Flux rejects as variable names are mapped by VarName
//     (every character but a letter, digit or _ becomes _, and a leading
//     digit gets a _ before it) or by WithRename; two outputs landing on one
//     name are an error naming both.
//
// Substituting (Substituter, Vars) follows fluxcd/pkg/kustomize's
// SubstituteVariables step for step, with fluxcd/pkg/envsubst: re-serialise,
// honour the kustomize.toolkit.fluxcd.io/substitute: disabled label or
// annotation, load substituteFrom in order (optional ones may be missing),
// let the inline substitute map win, strip newlines from values, validate
// every variable name, honour substituteStrategy, and fail on a variable
// without a value or default (strict, as kustomize-controller ≥ v1.9).
// substitute/flux_diff_test.go runs the same cases through Flux's own code.
//
// Check finds, with file:line, what Flux would fail on or silently retype: a
// variable no source provides, an invalid variable name, a value YAML 1.1
// retypes where it is substituted unquoted, $var without braces and
// shell-style ${VAR} in scripts, and boolean-looking keys of an inline
// substitute map.
//
// Errors name the file and line (*FileError) or the object (*ObjectError)
// and wrap the sentinels of this package for errors.Is. No error, log line
// or String method ever shows a sensitive value.
package substitute
