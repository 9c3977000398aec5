//go:build e2e

package e2e

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

// TestWakeLostEvent is issue 29's proof that wake cannot lose a wake-up:
// in stock Flux, a chain a -> b -> c of a stack with wake, whose wake
// Secret is applied only once a is Ready. Until then the Receiver is not
// Ready and the Provider has no address, so notification-controller drops
// a's "Reconciliation finished" event, as it drops an event that arrives
// before the Receiver is initialised on a fresh cluster; b, which checked a
// before it was Ready, would wait out --requeue-dependency (30s). The wake
// Kustomization becomes Ready once the Receiver is, and its own event wakes
// b and c: b is Ready well before its poll, and no layer fails.
func TestWakeLostEvent(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, Stock)
	plan, err := stack().Layer("a").Then("b").Then("c").Build()
	require.NoError(t, err)
	require.NotNil(t, plan.Wake)
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, l := range []string{"a", "b", "c"} {
		files[l+"/configmap.yaml"] = fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: layer-%s\n  namespace: %s\ndata:\n  layer: %s\n", l, fluxNamespace, l)
	}
	writeFiles(t, dir, files)
	require.NoError(t, plan.WriteDir(filepath.Join(dir, rootPath)))
	res := push(t, c, dir, "wake-lost")
	obs := c.Observe(rootName)
	obs.Begin(revision(res))
	applyRoot(t, c, "wake-lost", rootPath)

	obs.WaitReady("a")
	seen := obs.Report()
	require.Zero(t, seen["b"].Ready, "b was Ready before the wake Secret existed: a was Ready before b ever waited, nothing to prove")
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
	// b checked a when the root applied them, before a was Ready: its poll
	// comes --requeue-dependency (30s) after that at the earliest.
	require.Less(t, b.Ready, layering.DefaultRequeueDependency,
		"b waited for its dependency poll: the lost event was not made up (a Ready %.1fs, Secret %.1fs, wake Ready %.1fs, b Ready %.1fs)",
		a.Ready.Seconds(), secretAt.Seconds(), w.Ready.Seconds(), b.Ready.Seconds())
	t.Logf("a Ready %.1fs, Secret applied %.1fs, wake Ready %.1fs, b Ready %.1fs, all Ready %.1fs\n%s",
		a.Ready.Seconds(), secretAt.Seconds(), w.Ready.Seconds(), b.Ready.Seconds(), d.Figures.Ready.Seconds(), table(d.Layers))
	recordSummary("W0", fmt.Sprintf("wake makes up a lost event (stock flags, Secret applied after a was Ready): a Ready %.1fs, Secret %.1fs, wake Ready %.1fs, b Ready %.1fs (its poll: ≥ 30s), all Ready %.1fs, failed %d",
		a.Ready.Seconds(), secretAt.Seconds(), w.Ready.Seconds(), b.Ready.Seconds(), d.Figures.Ready.Seconds(), d.Figures.Failed))
}
