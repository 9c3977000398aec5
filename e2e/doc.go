// Package e2e proves fluxpack's output in real Flux. Its tests (build tag
// e2e, run by `make e2e`) start a whole control plane on 127.0.0.1 from the
// binaries hack/tools.sh builds into .cache: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, kwok (a fake node on which
// Deployments and Pods become Ready), source-controller,
// kustomize-controller and helm-controller, and a CNCF distribution registry.
// Each case pushes its manifests with `fluxpack push`, applies only the root
// OCIRepository and Kustomization, and watches every layer (a Flux
// Kustomization) until Ready. A cluster is up once every Flux controller
// has started the workers of its reconcilers, as its log says: /readyz
// answers before the caches have synced, and an object created then waits
// for the controller's own start-up, no layout's time (as in a cluster
// whose controllers have run for long when the artifact is pushed).
// Every case (and each of S0's two layouts) has a cluster of its own, and
// they run in parallel (make e2e passes -parallel), so the figures of one run
// include the other clusters' load on the machine. TestRaceRules, which
// proves each lint rule with a naive and a fixed repository, is the
// exception: all its naive repositories share one cluster, all its fixed
// ones another.
//
// What a case reports, per layer:
//   - ready: time from applying the root objects until the layer is first seen
//     Ready=True with the pushed revision applied;
//   - own: its own reconcile time, from the last time it was seen starting a
//     reconcile (Ready=Unknown, reason Progressing) until Ready;
//   - failed: the number of failed reconciles, counted from a continuous watch
//     as the times the layer enters Ready=False with a reason other than the
//     waiting reasons DependencyNotReady and ArtifactFailed (source not yet
//     fetched); kustomize-controller emits a Warning event for each such
//     attempt (ReconciliationFailed, HealthCheckFailed, BuildFailed, …), and
//     the Warning events are listed too, as a cross-check.
//
// The critical path starts at the layer Ready last and follows, at each step,
// the dependency Ready last; layers without dependsOn hang off the root
// Kustomization that applies them. Its figure is the sum of the own reconcile
// times along it; the difference to the wall time is time spent waiting for
// dependency re-checks (--requeue-dependency) and the source.
//
// No figure is asserted: deadlines are failure bounds, and the tests assert
// only order (every layer Ready after all it depends on, by watch order),
// revisions, contents and failure counts. Nor is a race left to timing:
// where one is the point (S0, R0, the lint rule cases, W0), the test holds
// the slow side (an operator's pod, and its webhook server, whose port
// refuses connections until then) until it has seen the fast side's layer
// fail (a naive layout) or wait for its dependency (a fixed one), so both
// layouts run in the same forced order on any machine. Logs of every
// component, the Flux objects and the events of a failed run are kept under
// e2e/logs/<test>/.
package e2e
