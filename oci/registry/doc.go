// Package registry serves a local OCI registry to try fluxpack against:
// push, pull, tag and list, signing with cosign keys or notation, and Flux's
// OCIRepository (spec.url oci://HOST:PORT/REPOSITORY, spec.insecure: true,
// as it speaks plain HTTP), with no Docker daemon, account or
// configuration. It is go-containerregistry's pkg/registry behind an
// http.Server, with the OCI 1.1 referrers API on.
//
//	s, err := registry.Listen(registry.WithDir("/tmp/blobs")) // 127.0.0.1:5000
//	if err != nil { … }
//	fmt.Println("push to oci://" + s.Addr() + "/platform:v1")
//	err = s.Serve(ctx) // until ctx is done, then shuts down gracefully
//
// Listen binds the address (DefaultAddr unless WithAddr; port 0 picks a
// free one, which Addr reports) and Serve serves it. Blobs are kept in
// memory, or with WithDir as files in a folder (DIR/sha256/<hex>), where
// they outlive the server: a push after a restart uploads no blob the
// folder holds. Manifests and tags are always in memory: they are lost
// when the server stops.
//
// Invariants:
//
//   - Loopback only, unless WithAllowRemote. The registry has no
//     authentication and no TLS: anyone who reaches it can push, overwrite
//     and pull. Listen refuses any address whose host is not a loopback IP
//     or "localhost" (":5000" and "0.0.0.0:5000" listen on every interface)
//     with ErrNotLoopback, before binding anything.
//   - Stopping is graceful: Serve stops accepting connections when its
//     context is done and waits up to ShutdownGrace for the requests in
//     flight, then closes what is left.
//
// It is for trying things and for tests: no authentication, no TLS, no
// garbage collection, no quotas, no persistence of manifests and tags.
// For anything shared, run a real registry (CNCF distribution, Zot,
// Harbor).
package registry
