// Package sources fetches the artifacts of Flux sources the way
// source-controller does, for tools that read a Flux repository offline
// and need what its sources point at: the files of a GitRepository at the
// commit its spec.ref resolves to, of an OCIRepository at the digest its
// spec.ref resolves to (with spec.layerSelector), and the charts of
// HelmRepositories (HTTP index.yaml or OCI) and OCIRepositories, with
// version ranges resolved as source-controller resolves them.
//
//	f, err := sources.New(filepath.Join(cacheDir, "fluxpack", "sources"))
//	art, err := f.GitRepository(ctx, repo) // art.Dir, art.Revision "main@sha1:…"
//	chart, err := f.ResolveChart(ctx, "https://charts.example.com", "podinfo", ">=6.0.0")
//
// Every reference is resolved online (a branch to its commit, a tag to its
// digest, a range to the version it selects); content is kept in an
// on-disk cache addressed by what it is (a commit hash, a manifest digest,
// a chart's sha256), so a second run downloads nothing that did not change.
// Directories of the cache are written beside their final name and renamed
// into place: a reader never sees half an artifact. Callers must not
// change them.
//
// Errors that say the source was reached and has no such ref, version or
// layer, as source-controller would report on the object, satisfy
// IsNotFound; the others (network, credentials) are why a source could not
// be checked.
package sources
