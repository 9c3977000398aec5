// Package outputs carries the cloud values IaC makes into Flux: it reads IaC
// outputs and turns them into the objects a Kustomization's
// spec.postBuild.substituteFrom and a HelmRelease's spec.valuesFrom read.
//
//	outs, err := outputs.Read("tf.json") // terraform output -json
//	m, err := outs.Render("cluster-vars", "flux-system", nil)
//	// m.ConfigMap: the plain values; m.Secret: the sensitive ones.
//
// Reading (Read, Parse):
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
//   - Names that Flux rejects as variable names are mapped by
//     substitute.VarName (every character but a letter, digit or _ becomes
//     _, and a leading digit gets a _ before it) or by WithRename; two
//     outputs landing on one name are an error naming both.
//
// Rendering (Outputs.Render, ValuesMap): the ConfigMap and Secret named for
// substituteFrom, and one values.yaml ConfigMap per chart for valuesFrom,
// each value at the path the values map gives it.
//
// Errors name the file and line (*FileError) and wrap the sentinels of this
// package for errors.Is. No error, log line or String method ever shows a
// sensitive value. The package reads files and writes only with WriteDir;
// substituting is package substitute's job.
package outputs
