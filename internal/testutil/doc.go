// Package testutil holds helpers shared by fluxpack's tests: golden files with
// an -update flag, an in-process OCI registry, deterministic tree generators,
// and the lookup of real third-party binaries (registry, etcd, kube-apiserver,
// Flux controllers) that hack/tools.sh builds into the git-ignored .cache.
// For signing tests: key pairs, a notation PKI, a sigstore KMS plugin
// (KMSPlugin, built from ./sigstore-kms-testkms) and stand-ins for Fulcio and
// Rekor on loopback with their trusted root (Sigstore).
//
// Nothing here is imported by non-test code.
package testutil
