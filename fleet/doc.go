// Package fleet ships one platform to many clusters: it renders every
// cluster of a layering.Fleet and pushes each cluster's artifact
// concurrently (bounded by Jobs), skipping those whose tag already holds
// the same content, and reports one Result per cluster. One cluster's
// failure does not stop the others. Flux itself is the distributed engine:
// each cluster's source-controller pulls its own artifact; fleet only
// produces and ships them.
//
// Each cluster's artifact is the stack's directory (the layers' folders)
// with the cluster's render at the stack's renderedPath, less the fleet's
// inputs (the fleet file, every IaC outputs file: they hold sensitive
// values), exactly as `fluxpack render` then `fluxpack push` would make it
// for that cluster. The stack's directory is read once (oci.ReadTree) and
// each cluster's render is made in memory (layering.Fleet.ClusterFiles),
// so an unchanged cluster costs its render, a hash of its tree and one
// manifest read at the registry.
package fleet
