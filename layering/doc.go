// Package layering turns a platform's bootstrap order into Flux objects that
// apply it without races: one Kustomization (kustomize.toolkit.fluxcd.io/v1)
// per layer, gated by spec.dependsOn, from one OCIRepository
// (source.toolkit.fluxcd.io/v1), and a HelmRelease
// (helm.toolkit.fluxcd.io/v2) for layers that install a chart.
//
//	plan, err := layering.New("external-secrets", layering.FromOCI("oci://registry/platform", "v1")).
//		Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
//		Then("operator", layering.Wait(), layering.MarkOperator()).
//		Then("crs", layering.DependsOnOperator(), layering.RetryInterval(time.Minute)).
//		Build() // every problem at once, never a panic
//	err = render.WriteDir(plan, "./flux")
//
// Then makes a layer depend on the previous one, DependsOn on any others,
// DependsOnOperator on the nearest layer marked with MarkOperator (so custom
// resources wait for the operator's admission webhook, not only for its
// CRDs). Options set the Kustomization fields a platform needs: Path,
// Interval, RetryInterval, Timeout, Prune, KeepOnDelete, DeletionPolicy,
// Wait, HealthChecks, HealthCheckExprs, ReadyExpr, TargetNamespace,
// Substitute, SubstituteFrom, Components, Patches, CommonMetadata, Force. The
// Operator preset expands to crds → operator → crs, and WebhookGuard makes a
// layer wait for its webhook's CA bundle. Package stackfile reads the same
// model from a stack file (fluxpack.dev/v1alpha1 Stack) and writes it back.
//
// Invariants:
//
//   - Safe defaults, all written out: interval 10m, retryInterval 2m,
//     timeout 5m, prune: true, deletionPolicy: MirrorPrune, path ./<layer>,
//     and wait: true unless the layer has health checks (which Flux ignores
//     under wait).
//   - Build never panics and returns every problem at once, wrapped in
//     ErrInvalidPlan: invalid (non DNS-1123) or duplicate names, unknown
//     dependencies, cycles (printed as a -> b -> a, "->" meaning "depends
//     on"), contradicting options. Problems of one layer are *LayerError.
//   - Output is deterministic byte for byte and marshalled as
//     `flux ... --export` does (sigs.k8s.io/yaml, no status, no
//     creationTimestamp). render.WriteDir writes it atomically: kustomization.yaml,
//     source.yaml, layers/<layer>.yaml, releases/<layer>/helmrelease.yaml.
//   - Kustomizations can only depend on Kustomizations, so a HelmRelease
//     layer is a Kustomization (wait: true) applying the HelmRelease from
//     <RenderedPath>/releases/<layer> of the source: push the rendered
//     directory with the platform's manifests, at RenderedPath.
//
// Verify sets the OCIRepository's spec.verify (stack file: source.verify),
// so source-controller refuses an artifact that is not signed with the key
// before any layer applies it; render.VerifySecret (render.StackFile:
// WithVerifyKey) renders the Secret holding the cosign public key as
// cosign.pub, render.NotationVerifySecret (WithVerifyNotation) the one
// holding notation's trustpolicy.json and CA certificates (ca.crt), for the
// secret file, never the rendered directory. VerifyKeyless (stack file:
// source.verify.matchOIDCIdentity, without secretRef) makes it verify
// keyless cosign signatures instead, accepting only the OIDC issuers and
// subjects given; identities source-controller would ignore (with
// secretRef, or provider notation) or could not compile are refused.
//
// Graph draws the DAG. Package lint reads each layer's manifests as
// kustomize-controller builds them and reports the races the seeds ran into.
//
// A reader of files records where things are declared (DeclaredIn,
// RootDir, VarsFrom, DeclaredAt) and a writer reads the options back
// (Builder.Settings). A built stack can be edited before Build, as package
// fleet edits it per cluster: RemoveLayer (its dependents wait for what it
// waited for), EditLayer, SetArtifact, SetOutputs, SubstituteDefaults;
// bad edits are recorded for Build like bad options.
//
// This package is the model, and only the model: no file format (package
// stackfile: stack files; package fleet: fleets and fleet files), no
// rendering to a folder (package render). It never touches the network,
// renders no chart and links no Helm (package lint and fluxbuild do), does
// not push (see package oci) and does not evaluate variables (see package
// substitute).
package layering
