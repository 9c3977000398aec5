// Package status tells where a Flux bootstrap stands on a live cluster: every
// layer (Kustomization, HelmRelease, and flux-operator's FluxInstance and
// ResourceSet when the API serves them) with a typed state, the revision it
// applied against the one its source serves, since when, and the layers that
// block the rest.
//
// A Watcher reads the cluster with client-go's dynamic client: one discovery
// request, then one LIST per kind (Snapshot), or one LIST and then one WATCH
// per kind (Watch, Wait); it never polls. The kinds are
// kustomize.toolkit.fluxcd.io Kustomization, helm.toolkit.fluxcd.io
// HelmRelease, source.toolkit.fluxcd.io GitRepository, OCIRepository,
// HelmRepository, HelmChart and ExternalArtifact, and
// fluxcd.controlplane.io FluxInstance and ResourceSet; a kind the API does
// not serve is left out.
//
//	w, err := status.New(restConfig, status.WithNamespace("flux-system"))
//	snap, err := w.Snapshot(ctx)
//	for _, b := range snap.Blocking() { // the failed or stuck layers others wait on
//		fmt.Println(b.Ref, b.State, b.Message, b.Holds)
//	}
//
//	snaps, err := w.Watch(ctx) // a snapshot per change
//	_, err = w.Wait(ctx, status.WithRevision(digest), status.WithStalled(time.Minute))
//
// States (Layer.State), from the Ready condition, spec.suspend and the
// source's Ready condition:
//
//   - Ready: Ready=True for the current generation;
//   - Reconciling: Ready=Unknown (Progressing) or a generation not yet
//     observed; Layer.Step says applying or health-checking (the
//     Healthy=Unknown kustomize-controller sets while it runs the checks);
//   - WaitingOn: Ready=False, reason DependencyNotReady; Layer.WaitingOn
//     names the spec.dependsOn entries that are not Ready;
//   - SourceNotReady: its source is not Ready or has no artifact
//     (reason ArtifactFailed while the source is not Ready);
//   - Failed: Ready=False for any other reason; Layer.Terminal when the
//     failure will not heal without a change (Stalled=True, a build
//     failure of the revision the source serves, or its path missing
//     from it);
//   - Suspended: spec.suspend is true.
//
// The graph is the live objects' spec.dependsOn, so the cluster alone is
// enough; the layers are ordered along it. A failed layer's controller
// message is mapped to the lint rule that explains such failures (Classify:
// a webhook that refuses connections is webhook-order, "no matches for
// kind" crd-order, a namespace not found namespace-order, a health check
// that never passes health-check); WithExplainer lets a caller attach more
// (the finding lint made on the tree the cluster runs, with the missing
// dependsOn and the fix) without this package knowing lint.
//
// Watcher.Wait is what CI needs after a push: it returns once every layer
// is Ready and every Kustomization applied the revision (Layer.UpToDate),
// and a *FailedError as soon as a layer fails for good: terminally, with
// the same message for longer than WithStalled's limit, or suspended
// without the revision. It sets one timer for the oldest failure's limit
// instead of polling.
//
// Snapshot.Require (and Watcher.Require, one read) is the same verdict
// without waiting: nil when every layer applied the revision and is Ready,
// else a *NotReadyError naming the blocking layers, or the layers still on
// another revision; a promotion asks it of the cluster promoted from.
//
// WithPlan lays the cluster out along a plan (a stack file's layers): a
// planned layer the cluster lacks is in the snapshot as Missing, and
// blocks.
//
// A Recorder turns the snapshots of a watch into a Timeline: per layer the
// spans it spent waiting on dependencies, applying and health-checking, the
// critical path, and the time lost to dependency polling (a layer still
// waiting after all its dependencies were Ready, what wake saves);
// Timeline.WriteHTML draws it as one self-contained page.
//
// The package does not read repositories, does not lint, and writes nothing
// to the cluster.
package status
