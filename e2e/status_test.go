//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
	"github.com/fluxpack/fluxpack/status"
)

// statusOutput is what `fluxpack status -o json` and `wait -o json` print.
type statusOutput struct {
	status.Snapshot
	Blocking []status.Blocker `json:"blocking"`
	Done     bool             `json:"done"`
}

// runFluxpack runs the fluxpack command line and returns its exit code,
// stdout and stderr (it does not fail the test on a non-zero code).
func runFluxpack(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, "e2e", args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// layerFiles are a ConfigMap per layer, and broken's kustomization naming
// a file that does not exist (kustomize build fails: BuildFailed).
func layerFiles(names ...string) map[string][]byte {
	files := map[string][]byte{}
	for _, l := range names {
		files[l+"/configmap.yaml"] = fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: layer-%s\n  namespace: %s\ndata:\n  layer: %s\n", l, fluxNamespace, l)
		if l == "broken" {
			files[l+"/kustomization.yaml"] = []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - configmap.yaml\n  - missing.yaml\n")
		}
	}
	return files
}

// pushLayers renders the layers with package layering, pushes them as
// repository name, and returns the revision.
func pushLayers(t *testing.T, c *Cluster, name string, b *layering.Builder, names ...string) (string, []string) {
	t.Helper()
	plan, err := b.Build()
	require.NoError(t, err)
	dir := t.TempDir()
	writeFiles(t, dir, layerFiles(names...))
	require.NoError(t, render.WriteDir(plan, filepath.Join(dir, rootPath)))
	return revision(push(t, c, dir, name)), layerNames(plan)
}

// TestStatusWait is issue 43's proof of `fluxpack wait` and `status` in real
// Flux: wait, started before the root objects exist, exits 0 once every
// layer applied the pushed revision and is Ready (not before: the observer
// saw them all Ready, and wait's own last snapshot says so); a suspended
// layer shows as Suspended in status, and makes wait exit 1 when waiting for
// a revision it has not applied (0 when it has).
func TestStatusWait(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, Fast)
	kubeconfig := c.path("kubeconfig")
	rev, layers := pushLayers(t, c, "status-wait", handStack().Layer("a").Then("b").Then("c"), "a", "b", "c")

	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runFluxpack(t.Context(), "wait", "--kubeconfig", kubeconfig, "--revision", rev, "--timeout", reconcileDeadline.String(), "-o", "json")
		done <- result{code, stdout, stderr}
	}()
	obs := c.Observe(rootName)
	obs.Begin(rev)
	applyRoot(t, c, "status-wait", rootPath)
	obs.WaitReady(append([]string{rootName}, layers...)...)
	r := <-done
	require.Equal(t, cli.ExitOK, r.code, "fluxpack wait on a clean bootstrap: %s", r.stderr)
	var out statusOutput
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "wait -o json: %s", r.stdout)
	assert.True(t, out.Done)
	require.Len(t, out.Layers, len(layers)+1, "the root and every layer")
	for _, l := range out.Layers {
		assert.Equal(t, status.StateReady, l.State, "%s", l.Ref)
		assert.Equal(t, rev, l.Applied, "%s", l.Ref)
	}
	assert.Contains(t, r.stderr, "Kustomization/flux-system/c Ready", "wait's progress on stderr")

	// Suspend c, as `flux suspend ks c` does.
	var k kustomizev1.Kustomization
	require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNamespace, Name: "c"}, &k))
	patch := client.MergeFrom(k.DeepCopy())
	k.Spec.Suspend = true
	require.NoError(t, c.Client.Patch(t.Context(), &k, patch))
	code, stdout, stderr := runFluxpack(t.Context(), "status", "--kubeconfig", kubeconfig, "-o", "json")
	require.Equal(t, cli.ExitOK, code, stderr)
	out = statusOutput{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	states := map[string]status.State{}
	for _, l := range out.Layers {
		states[l.Name] = l.State
	}
	assert.Equal(t, map[string]status.State{rootName: status.StateReady, "a": status.StateReady, "b": status.StateReady, "c": status.StateSuspended}, states)
	// c applied the revision before it was suspended: wait is content.
	code, _, stderr = runFluxpack(t.Context(), "wait", "--kubeconfig", kubeconfig, "--revision", rev, "--timeout", reconcileDeadline.String())
	assert.Equal(t, cli.ExitOK, code, "wait with a layer suspended at the revision: %s", stderr)
	// Another revision: c, suspended, will never apply it.
	other := "sha256:" + strings.Repeat("0", 64)
	code, _, stderr = runFluxpack(t.Context(), "wait", "--kubeconfig", kubeconfig, "--revision", other, "--timeout", reconcileDeadline.String())
	assert.Equal(t, cli.ExitFinding, code, "wait for a revision a suspended layer will not apply: %s", stderr)
	assert.Contains(t, stderr, "Kustomization/flux-system/c suspended")
	code, stdout, _ = runFluxpack(t.Context(), "status", "--kubeconfig", kubeconfig)
	require.Equal(t, cli.ExitOK, code)
	assert.Regexp(t, `Kustomization/flux-system/c +Suspended`, stdout)
}

// TestStatusWaitBroken: wait exits 1 on a layer whose kustomization does
// not build, within 10s of the failure (not at --timeout), naming the layer
// and the controller's message.
func TestStatusWaitBroken(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, Fast)
	kubeconfig := c.path("kubeconfig")
	rev, _ := pushLayers(t, c, "status-broken", handStack().Layer("a").Then("broken"), "a", "broken")

	var mu sync.Mutex
	var failedAt time.Time
	c.WatchEach(&kustomizev1.KustomizationList{}, func(_ context.Context, obj client.Object) {
		k := obj.(*kustomizev1.Kustomization)
		mu.Lock()
		defer mu.Unlock()
		if k.Name == "broken" && failedAt.IsZero() && reconcileFailed(k) {
			failedAt = time.Now()
		}
	})
	type result struct {
		code   int
		stderr string
		at     time.Time
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runFluxpack(t.Context(), "wait", "--kubeconfig", kubeconfig, "--revision", rev, "--timeout", reconcileDeadline.String())
		done <- result{code, stderr, time.Now()}
	}()
	applyRoot(t, c, "status-broken", rootPath)
	r := <-done
	require.Equal(t, cli.ExitFinding, r.code, "fluxpack wait on a broken layer: %s", r.stderr)
	assert.Contains(t, r.stderr, "Kustomization/flux-system/broken failed (terminal)")
	assert.Contains(t, r.stderr, "missing.yaml")
	// The harness's own watch may see the failure after wait does (wait
	// reads the same events; the reconcile now fails at once): give it the
	// time to, a failure's bound, not a timing.
	seen := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return failedAt
	}
	require.Eventually(t, func() bool { return !seen().IsZero() }, time.Minute, 100*time.Millisecond, "the test never saw the broken layer fail")
	took := r.at.Sub(seen())
	t.Logf("wait exited %s after the failure", took.Round(time.Millisecond))
	assert.Less(t, took, 10*time.Second, "wait did not exit within 10s of the failure")
}

// TestStatusRacyRepository is R0's racy variant (the custom resources
// depend on the CRDs, not on the operator serving their webhook) seen by
// `fluxpack status ENTRY` while the crs layer fails: it names the layer,
// the webhook's message, webhook-order, and lint's missing dependsOn.
func TestStatusRacyRepository(t *testing.T) {
	t.Parallel()
	var (
		dir string
		mu  sync.Mutex
		got struct {
			code           int
			stdout, stderr string
			ran            bool
		}
	)
	var kubeconfig string
	c, _, files := startS0(t, Fast, func(k *kustomizev1.Kustomization) bool {
		if !reconcileFailed(k) {
			return false
		}
		// The webhook stays closed until this returns: status sees the
		// failure.
		mu.Lock()
		defer mu.Unlock()
		if !got.ran {
			got.ran = true
			got.code, got.stdout, got.stderr = runFluxpack(context.WithoutCancel(t.Context()), "status", filepath.Join(dir, repoEntry), "--kubeconfig", kubeconfig,
				"--root", dir, "--source", "OCIRepository/flux-system/"+rootName+"="+dir, "-o", "json")
		}
		return true
	})
	kubeconfig = c.path("kubeconfig")
	dir = t.TempDir()
	copyTree(t, filepath.Join("testdata", "repos", "platform"), dir)
	writeFiles(t, dir, map[string][]byte{"infrastructure/operator/webhook.yaml": files["operator/webhook.yaml"]})
	edit := func(file, from, to string) {
		p := filepath.Join(dir, repoEntry, file)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.True(t, bytes.Contains(b, []byte(from)), "%s has no %q", file, from)
		require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644))
	}
	edit("crs.yaml", "    - name: operator", "    - name: crds")
	edit("operator.yaml", "    - name: crds", "    - name: namespaces")

	DeployEntry(t, c, "status-racy", dir, repoEntry, []string{"apps", "crds", "crs", "namespaces", "operator"})
	mu.Lock()
	defer mu.Unlock()
	require.True(t, got.ran, "status never ran: crs never failed")
	require.Equal(t, cli.ExitOK, got.code, "fluxpack status: %s", got.stderr)
	var out statusOutput
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &out), "status -o json: %s", got.stdout)
	var crs *status.Blocker
	for i := range out.Blocking {
		if out.Blocking[i].Name == "crs" {
			crs = &out.Blocking[i]
		}
	}
	require.NotNil(t, crs, "status names no blocking crs layer: %s", got.stdout)
	assert.Equal(t, status.StateFailed, crs.State)
	assert.Contains(t, crs.Message, "failed calling webhook")
	assert.Contains(t, crs.Message, "connection refused")
	require.NotNil(t, crs.Explanation, "crs's failure has no explanation")
	assert.Equal(t, "webhook-order", crs.Explanation.Rule)
	assert.Equal(t, "crs dependsOn operator", crs.Explanation.Edge, "the missing dependsOn lint found")
	assert.Contains(t, crs.Explanation.Finding, "crs")
	assert.Contains(t, got.stderr, "linted the repository")
	t.Logf("status while crs failed:\n%s", strings.TrimSpace(got.stdout))
}

// pollGap is the least waiting after every dependency was Ready that
// counts as a dependency poll in a timeline: stock Flux polls a dependency
// every 30s, a wake-up arrives within a second or two.
const pollGap = 5.0 // seconds

// timelineRecorder watches the cluster with package status from now on and
// records its timeline, as `fluxpack status --timeline` does.
type timelineRecorder struct {
	c   *Cluster
	rec *status.Recorder
}

func recordTimeline(t *testing.T, c *Cluster) *timelineRecorder {
	t.Helper()
	w, err := status.New(c.Config)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	snaps, err := w.Watch(ctx)
	require.NoError(t, err)
	tr := &timelineRecorder{c: c, rec: status.NewRecorder(time.Now())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range snaps {
			tr.rec.Add(s)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return tr
}

// check waits until the timeline has every layer of d Ready, then checks
// that its total is the harness's ready time (within 1s), and writes it
// (HTML and JSON) to $FLUXPACK_E2E_TIMELINES when set; it returns it.
func (tr *timelineRecorder) check(t *testing.T, d *Deployment, name string) *status.Timeline {
	t.Helper()
	var tl *status.Timeline
	waitFor(t, tr.c, "the timeline to see every layer Ready", reconcileDeadline, func(context.Context) (bool, error) {
		tl = tr.rec.Timeline()
		ready := map[string]bool{}
		for _, l := range tl.Layers {
			ready[l.Name] = l.Ready >= 0
		}
		for _, n := range append([]string{rootName}, d.Names...) {
			if !ready[n] {
				return false, fmt.Errorf("%s not Ready in the timeline", n)
			}
		}
		return tl.Complete, nil
	})
	end := tl.Start.Add(time.Duration(tl.Total * float64(time.Second)))
	harness := d.Observer.start.Add(d.Figures.Ready)
	diff := end.Sub(harness)
	t.Logf("%s timeline: all Ready %.1fs after its start, %s from the harness's (ready %.1fs); critical path %v; lost to dependency polling %.1fs on it, %.1fs in all",
		name, tl.Total, diff.Round(time.Millisecond), d.Figures.Ready.Seconds(), tl.CriticalPath, tl.LostOnPath, tl.LostAll)
	assert.Less(t, diff.Abs(), time.Second, "the timeline's end is not the harness's ready time")
	if dir := os.Getenv("FLUXPACK_E2E_TIMELINES"); dir != "" {
		var page bytes.Buffer
		require.NoError(t, tl.WriteHTML(&page))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".html"), page.Bytes(), 0o644))
		b, err := json.MarshalIndent(tl, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644))
	}
	return tl
}

// gaps are the layers of tl that waited pollGap or more after every
// dependency was Ready.
func gaps(tl *status.Timeline) []string {
	var out []string
	for _, l := range tl.Layers {
		if l.Lost != nil && l.Lost.End-l.Lost.Start >= pollGap {
			out = append(out, fmt.Sprintf("%s %.1fs", l.Name, l.Lost.End-l.Lost.Start))
		}
	}
	return out
}

// checkS3Timeline is issue 43's timeline proof on S3: without wake (stock
// flags) the critical path shows dependency-poll gaps; with wake no layer
// has one, but for the layers whose dependency was Ready before the wake
// objects were (their wake-up comes with the wake Kustomization's Ready).
func checkS3Timeline(t *testing.T, tr *timelineRecorder, d *Deployment, m Mode, layout string) {
	t.Helper()
	name := "s3-" + strings.ReplaceAll(layout, " ", "-") + "-" + m.Name
	tl := tr.check(t, d, name)
	if layout == "without wake" {
		var onPath []string
		critical := map[string]bool{}
		for _, l := range tl.Layers {
			critical[l.Name] = l.Critical
		}
		for _, g := range gaps(tl) {
			if critical[strings.Fields(g)[0]] {
				onPath = append(onPath, g)
			}
		}
		assert.NotEmpty(t, onPath, "S3 without wake: no dependency-poll gap on the critical path %v", tl.CriticalPath)
		return
	}
	// With wake, a layer is woken by its dependency's Ready event, or, for
	// an event sent before the Receiver was Ready (issue 29), by the wake
	// Kustomization's own once it is Ready: no gap ends later than that.
	wake := d.Names[len(d.Names)-1]
	var wakeReady float64 = -1
	for _, l := range tl.Layers {
		if l.Name == wake {
			wakeReady = l.Ready
		}
	}
	require.GreaterOrEqual(t, wakeReady, 0.0, "the wake Kustomization %s is not in the timeline", wake)
	for _, l := range tl.Layers {
		if l.Lost != nil && l.Lost.End-l.Lost.Start >= pollGap {
			assert.Less(t, l.Lost.End, wakeReady+pollGap, "S3 with wake: %s waited %.1fs after its dependencies were Ready, until %.1fs, past the wake Kustomization's Ready at %.1fs: a dependency poll",
				l.Name, l.Lost.End-l.Lost.Start, l.Lost.End, wakeReady)
		}
	}
}
