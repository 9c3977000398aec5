//go:build e2e

package e2e

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/render"
)

// noPoll is the Mode of TestWakeLostEvent: stock flags but
// --requeue-dependency=1h, so that a Kustomization whose dependency was not
// Ready is not checked again within the test: only a wake-up can make it
// Ready.
var noPoll = Mode{Name: "stock-requeue-dependency-1h", RequeueDependency: "1h"}

// TestWakeLostEvent is issue 29's proof that wake cannot lose a wake-up: a
// chain a -> b -> c of a stack with wake, whose wake Secret is applied only
// once a is Ready. Until then the Receiver is not Ready and the Provider has
// no address, so notification-controller drops a's "Reconciliation
// finished" event, as it drops an event that arrives before the Receiver is
// initialised on a fresh cluster. The order is forced: a holds a pod that
// starts only once b was seen waiting for a (DependencyNotReady), so b
// always checked a before a was Ready. The controllers poll a dependency
// not Ready only every hour (noPoll), so b can become Ready only by a
// wake-up: the wake Kustomization becomes Ready once the Receiver is, and
// its own event wakes b and c, and no layer fails.
func TestWakeLostEvent(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, noPoll)
	c.RunGatedPods(0, c.HoldUntil("b", waitingForDependency), nil)
	plan, err := stack().Layer("a").Then("b").Then("c").Build()
	require.NoError(t, err)
	require.NotNil(t, plan.Wake)
	dir := t.TempDir()
	files := map[string][]byte{"a/deployment.yaml": []byte(gatedDeployment)}
	for _, l := range []string{"a", "b", "c"} {
		files[l+"/configmap.yaml"] = fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: layer-%s\n  namespace: %s\ndata:\n  layer: %s\n", l, fluxNamespace, l)
	}
	writeFiles(t, dir, files)
	require.NoError(t, render.WriteDir(plan, filepath.Join(dir, rootPath)))
	res := push(t, c, dir, "wake-lost")
	obs := c.Observe(rootName)
	obs.Begin(revision(res))
	applyRoot(t, c, "wake-lost", rootPath)

	obs.WaitReady("a")
	seen := obs.Report()
	require.Zero(t, seen["b"].Ready, "b was Ready before the wake Secret existed")
	time.Sleep(3 * time.Second) // a's event is long gone
	secret, err := plan.Wake.Secret(c.ReceiverURL, rand.Text())
	require.NoError(t, err)
	c.create(secret)
	secretAt := time.Since(obs.start)

	names := append(layerNames(plan), plan.Wake.Kustomization.Name)
	obs.WaitReady(append([]string{rootName}, names...)...)
	d := &Deployment{c: c, Observer: obs, Dir: dir, Pushed: res, Names: names, Layers: obs.Report()}
	AssertOrder(t, d.Layers)
	d.RequireNoFailures(t)
	d.Figures = Summarise(d.Layers, rootName)
	a, b, w := d.Layers["a"], d.Layers["b"], d.Layers[plan.Wake.Kustomization.Name]
	require.Less(t, a.Ready, secretAt, "a was not Ready before the Secret: its event was not lost")
	// b checked a before a was Ready (the hold), and its next check would
	// come an hour later: it is Ready because the wake Kustomization's
	// event made up a's.
	require.Greater(t, b.Ready, secretAt, "b was Ready before the wake Secret existed")
	t.Logf("a Ready %.1fs, Secret applied %.1fs, wake Ready %.1fs, b Ready %.1fs, all Ready %.1fs\n%s",
		a.Ready.Seconds(), secretAt.Seconds(), w.Ready.Seconds(), b.Ready.Seconds(), d.Figures.Ready.Seconds(), table(d.Layers))
	recordSummary("W0", fmt.Sprintf("wake makes up a lost event (Secret applied after a was Ready, b held waiting for a, no dependency poll within the hour): a Ready %.1fs, Secret %.1fs, wake Ready %.1fs, b Ready %.1fs, all Ready %.1fs, failed %d",
		a.Ready.Seconds(), secretAt.Seconds(), w.Ready.Seconds(), b.Ready.Seconds(), d.Figures.Ready.Seconds(), d.Figures.Failed))
}

// gatedDeployment is a pod the test holds back from Ready (its gate),
// which keeps its layer (wait: true) from being Ready until RunGatedPods
// lets it start.
const gatedDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: held
  namespace: flux-system
spec:
  replicas: 1
  selector:
    matchLabels:
      app: held
  template:
    metadata:
      labels:
        app: held
      annotations:
        e2e.fluxpack.io/gate: closed
    spec:
      containers:
        - name: held
          image: registry.k8s.io/pause:3.10
`
