//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/render"
)

// rootName names the root OCIRepository and Kustomization, the only objects
// a case applies itself; rootPath is the folder of the artifact holding the
// layers' Kustomizations (rendered by package layering).
const (
	rootName = "platform"
	rootPath = "clusters"
	tag      = "main"
)

// stack starts fluxpack's layout: a layering stack whose layers read the
// root OCIRepository and wake their dependents (WakeDependents); a case adds
// its layers (each a folder of the artifact named after it unless given a
// Path) and Deploy renders them with package layering, as `fluxpack render`
// does, into rootPath (so HelmRelease layers apply
// rootPath/releases/<layer>).
func stack() *layering.Builder {
	return layering.New(rootName, layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: rootName}),
		layering.RenderedPath("./"+rootPath), layering.WakeDependents())
}

// handStack is stack without wake: a layout as people write it by hand.
func handStack() *layering.Builder {
	return layering.New(rootName, layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: rootName}),
		layering.RenderedPath("./"+rootPath))
}

// copyTree copies the folder src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// writeFiles writes files (path relative to dir → content) into dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
}

// fluxpack runs the fluxpack command line with args, as a user would, and
// returns what it printed on stdout; it fails the test unless it exits 0.
func fluxpack(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), "e2e", args, &stdout, &stderr)
	require.Equal(t, cli.ExitOK, code, "fluxpack %s: %s", strings.Join(args, " "), stderr.String())
	return stdout.Bytes()
}

// push runs `fluxpack push DIR oci://HOST/NAME:main -o json [extra...]` and
// returns what it printed.
func push(t *testing.T, c *Cluster, dir, name string, extra ...string) oci.Result {
	t.Helper()
	url := fmt.Sprintf("oci://%s/%s:%s", c.Registry.Host, name, tag)
	args := []string{"push", dir, url, "-o", "json",
		"--source", "https://github.com/fluxpack/fluxpack", "--revision", "main@sha1:" + strings.Repeat("0", 40)}
	out := fluxpack(t, append(args, extra...)...)
	var res oci.Result
	require.NoError(t, json.Unmarshal(out, &res), "decoding the output of fluxpack push: %s", out)
	require.Equal(t, tag, res.Tag)
	require.True(t, strings.HasPrefix(res.Digest, "sha256:"), "digest %q", res.Digest)
	return res
}

// revision is what source-controller reports for a pushed tag.
func revision(res oci.Result) string { return res.Tag + "@" + res.Digest }

// applyRoot creates the root OCIRepository (the case's repository, tag main)
// and the root Kustomization applying the layers' Kustomizations at path.
func applyRoot(t *testing.T, c *Cluster, name, path string) {
	t.Helper()
	applyRootAt(t, c, fmt.Sprintf("oci://%s/%s", c.Registry.Host, name), tag, path)
}

// applyRootAt is applyRoot for any repository URL and tag.
func applyRootAt(t *testing.T, c *Cluster, url, tag, path string) {
	t.Helper()
	c.create(&sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: rootName, Namespace: fluxNamespace},
		Spec: sourcev1.OCIRepositorySpec{
			URL:       url,
			Reference: &sourcev1.OCIRepositoryRef{Tag: tag},
			Interval:  &metav1.Duration{Duration: 10 * time.Minute},
			Insecure:  true, // plain HTTP on loopback
		},
	})
	c.create(&kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: rootName, Namespace: fluxNamespace},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 10 * time.Minute},
			Path:      "./" + path,
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: rootName},
		},
	})
}

// Deployment is one layout pushed and reconciled in a cluster.
type Deployment struct {
	c        *Cluster
	Observer *Observer
	Dir      string
	Pushed   oci.Result
	Names    []string // the layers, without the root
	Layers   map[string]*layer
	Figures  Figures
}

// Deploy writes the folder tree plus files and the stack's Kustomizations,
// rendered by package layering into rootPath, to a temporary folder, pushes
// it with fluxpack as repository name, applies only the root objects, and
// waits until the root and every layer are Ready with the pushed revision;
// it checks the revision source-controller reports and that every layer
// became Ready after its dependencies.
func Deploy(t *testing.T, c *Cluster, name, tree string, files map[string][]byte, layers *layering.Builder) *Deployment {
	t.Helper()
	dir := t.TempDir()
	if tree != "" {
		copyTree(t, tree, dir)
	}
	writeFiles(t, dir, files)
	plan, err := layers.Build()
	require.NoError(t, err, "building the layers of %s", name)
	require.NoError(t, render.WriteDir(plan, filepath.Join(dir, rootPath)))
	if plan.Wake != nil {
		// Out of band, as render's secret file: the token, and the
		// cluster's receiver URL.
		secret, err := plan.Wake.Secret(c.ReceiverURL, rand.Text())
		require.NoError(t, err)
		c.create(secret)
	}
	names := layerNames(plan)
	if plan.Wake != nil {
		// The wake Kustomization is applied with the layers; it becomes
		// Ready once notification-controller has made the Receiver Ready.
		names = append(names, plan.Wake.Kustomization.Name)
	}
	return DeployDir(t, c, name, dir, names)
}

// layerNames are the names of a plan's layers.
func layerNames(plan *layering.Plan) []string {
	names := make([]string, len(plan.Layers))
	for i, l := range plan.Layers {
		names[i] = l.Name
	}
	return names
}

// DeployDir is Deploy for a folder already laid out: rootPath holds the
// Kustomizations of the named layers. pushArgs are added to fluxpack push.
func DeployDir(t *testing.T, c *Cluster, name, dir string, layers []string, pushArgs ...string) *Deployment {
	t.Helper()
	return DeployEntry(t, c, name, dir, rootPath, layers, pushArgs...)
}

// DeployEntry is DeployDir for a Flux repository: the root Kustomization
// applies its entry point (a folder of dir, such as clusters/e2e), whose
// Kustomizations are the named layers.
func DeployEntry(t *testing.T, c *Cluster, name, dir, entry string, layers []string, pushArgs ...string) *Deployment {
	t.Helper()
	res := push(t, c, dir, name, pushArgs...)
	require.True(t, res.Pushed, "the first push of %s uploaded nothing", name)
	obs := c.Observe(rootName)
	obs.Begin(revision(res))
	applyRoot(t, c, name, entry)
	obs.WaitReady(append([]string{rootName}, layers...)...)

	var repo sourcev1.OCIRepository
	require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNamespace, Name: rootName}, &repo))
	require.NotNil(t, repo.Status.Artifact, "OCIRepository/%s/%s has no artifact", fluxNamespace, rootName)
	require.Equal(t, revision(res), repo.Status.Artifact.Revision, "the revision source-controller reports is not what fluxpack push printed")

	d := &Deployment{c: c, Observer: obs, Dir: dir, Pushed: res, Names: layers}
	d.Layers = obs.Report()
	AssertOrder(t, d.Layers)
	d.Figures = Summarise(d.Layers, rootName)
	t.Logf("%s: ready %.1fs, critical path %.1fs %v, failed %d, warnings %d, root source ready %.1fs\n%s", name,
		d.Figures.Ready.Seconds(), d.Figures.CriticalPath.Seconds(), d.Figures.Path, d.Figures.Failed, d.Figures.Warnings,
		obs.SourceReady().Seconds(), table(d.Layers))
	return d
}

// RequireNoFailures asserts no layer ever failed: no failure seen on the
// watch and no Warning event.
func (d *Deployment) RequireNoFailures(t *testing.T) {
	t.Helper()
	for _, l := range d.Layers {
		require.Zero(t, l.Failures, "Kustomization/%s/%s failed: %v", fluxNamespace, l.Name, l.Messages)
		require.Zero(t, l.Warnings, "Kustomization/%s/%s has Warning events: %v", fluxNamespace, l.Name, l.WarningNotes)
	}
}

// Reconcile asks source-controller to reconcile the root OCIRepository now
// (as `flux reconcile source oci` does) and waits until it has handled the
// request; it returns the repository's status then.
func (d *Deployment) Reconcile(t *testing.T) sourcev1.OCIRepositoryStatus {
	t.Helper()
	token := time.Now().Format(time.RFC3339Nano)
	key := client.ObjectKey{Namespace: fluxNamespace, Name: rootName}
	var repo sourcev1.OCIRepository
	require.NoError(t, d.c.Client.Get(t.Context(), key, &repo))
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[meta.ReconcileRequestAnnotation] = token
	require.NoError(t, d.c.Client.Patch(t.Context(), &repo, patch))
	d.c.poll("OCIRepository/"+key.String()+" to handle the reconcile request", reconcileDeadline, func(ctx context.Context) (bool, error) {
		if err := d.c.Client.Get(ctx, key, &repo); err != nil {
			return false, err
		}
		ready := apimeta.FindStatusCondition(repo.Status.Conditions, meta.ReadyCondition)
		return repo.Status.LastHandledReconcileAt == token && ready != nil && ready.Status == metav1.ConditionTrue &&
			repo.Status.ObservedGeneration == repo.Generation, nil
	})
	return repo.Status
}

// RequireUpdates proves the two ways a later push behaves: pushing the same
// content again uploads nothing and source-controller, asked to reconcile,
// keeps the revision (no layer re-applies anything); pushing changed content
// (change writes into the folder) yields a new revision that every layer
// applies, and check then sees the change in the cluster.
func (d *Deployment) RequireUpdates(t *testing.T, name string, change func(dir string), check func(ctx context.Context) (bool, error)) {
	t.Helper()
	before := revision(d.Pushed)
	again := push(t, d.c, d.Dir, name)
	require.False(t, again.Pushed, "pushing unchanged content uploaded a new artifact")
	require.Equal(t, d.Pushed.Digest, again.Digest)
	st := d.Reconcile(t)
	require.Equal(t, before, st.Artifact.Revision, "an unchanged push changed the revision")
	var ks kustomizev1.KustomizationList
	require.NoError(t, d.c.Client.List(t.Context(), &ks, client.InNamespace(fluxNamespace)))
	for _, k := range ks.Items {
		require.Equal(t, before, k.Status.LastAttemptedRevision, "Kustomization/%s/%s attempted another revision", fluxNamespace, k.Name)
	}

	change(d.Dir)
	changed := push(t, d.c, d.Dir, name)
	require.True(t, changed.Pushed, "pushing changed content uploaded nothing")
	require.NotEqual(t, d.Pushed.Digest, changed.Digest)
	d.Observer.Begin(revision(changed))
	st = d.Reconcile(t)
	require.Equal(t, revision(changed), st.Artifact.Revision, "source-controller did not pick up the changed push")
	d.Observer.WaitReady(append([]string{rootName}, d.Names...)...)
	for _, l := range d.Observer.Report() {
		require.Zero(t, l.Failures, "Kustomization/%s/%s failed applying the changed push: %v", fluxNamespace, l.Name, l.Messages)
	}
	d.c.poll("the changed content in the cluster", reconcileDeadline, check)
}

// exists reports whether the object apiVersion/kind namespace/name exists.
func exists(ctx context.Context, c *Cluster, apiVersion, kind, namespace, name string) (bool, error) {
	var u unstructured.Unstructured
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &u)
	return err == nil, err
}

// summary collects one line per case, the runs of each layout in each Mode,
// and the per-layer tables for writeSummary.
var summary struct {
	sync.Mutex
	lines  map[string]string
	runs   map[string]map[string]run // by title ("S0 fluxpack"), then Mode name
	tables map[string]string         // by title, printed sorted (cases run in parallel)
}

// run is one layout's figures in one Mode, with a note (the failure a naive
// layout shows, say).
type run struct {
	Figures Figures
	Note    string
}

// goalRatio is issue 17's goal: a layout in stock Flux reaches all Ready
// within this factor of the time it takes with --requeue-dependency=1s.
const goalRatio = 1.5

// recordRun records the figures and table of one layout's run in the
// cluster's Mode; title is "<case> <layout>".
func recordRun(title string, d *Deployment, note string) {
	summary.Lock()
	if summary.runs == nil {
		summary.runs = map[string]map[string]run{}
	}
	if summary.runs[title] == nil {
		summary.runs[title] = map[string]run{}
	}
	summary.runs[title][d.c.Mode.Name] = run{d.Figures, note}
	summary.Unlock()
	recordTable(title+" ("+d.c.Mode.Name+" flags)", d)
	if err := appendFigures(title, d); err != nil {
		d.c.t.Errorf("recording the figures of %s: %v", title, err)
	}
}

// figuresRecord is one line of $FLUXPACK_E2E_FIGURES: a layout's run in
// one Mode, in seconds, for hack/bootstrapbench.
type figuresRecord struct {
	Layout       string   `json:"layout"`
	Mode         string   `json:"mode"`
	Ready        float64  `json:"ready"`
	CriticalPath float64  `json:"criticalPath"`
	Path         []string `json:"path"`
	Failed       int      `json:"failed"`
	Warnings     int      `json:"warnings"`
	// SourceReady is when the root OCIRepository had its artifact,
	// RootStarted when the root Kustomization started; Waited is the time
	// each layer waited after its dependencies were Ready, by layer.
	SourceReady float64            `json:"sourceReady"`
	RootStarted float64            `json:"rootStarted"`
	Waited      map[string]float64 `json:"waited"`
}

// appendFigures appends the figures of one layout's run to the file
// $FLUXPACK_E2E_FIGURES names, as a JSON line (nothing when it is unset).
func appendFigures(title string, d *Deployment) error {
	p := os.Getenv("FLUXPACK_E2E_FIGURES")
	if p == "" {
		return nil
	}
	rec := figuresRecord{Layout: title, Mode: d.c.Mode.Name, Ready: d.Figures.Ready.Seconds(),
		CriticalPath: d.Figures.CriticalPath.Seconds(), Path: d.Figures.Path, Failed: d.Figures.Failed,
		Warnings: d.Figures.Warnings, Waited: map[string]float64{}}
	if r := d.Layers[rootName]; r != nil {
		rec.RootStarted = r.Started.Seconds()
	}
	rec.SourceReady = d.Observer.SourceReady().Seconds()
	for _, l := range d.Layers {
		rec.Waited[l.Name] = waited(d.Layers, l).Seconds()
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	summary.Lock()
	defer summary.Unlock()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runLine is the summary line of one layout: each Mode's figures, stock
// first, and the ratio of the stock time to the fast one, checked against
// goalRatio for fluxpack's layouts and for R0 clean, the repository with
// the folder `fluxpack wake` wrote (a naive layout has no wake and polls).
func runLine(runs map[string]run, goal bool) string {
	var parts []string
	for _, m := range modes {
		r, ok := runs[m.Name]
		if !ok {
			continue
		}
		flags := "stock flags"
		if m.RequeueDependency != "" {
			flags = "--requeue-dependency=" + m.RequeueDependency
		}
		part := fmt.Sprintf("%s: %s", flags, figuresLine(r.Figures))
		if r.Note != "" {
			part += " (" + r.Note + ")"
		}
		parts = append(parts, part)
	}
	st, okS := runs[Stock.Name]
	fa, okF := runs[Fast.Name]
	// Wall time over the critical path: the time no controller spent
	// working on the chain that finished last (issue 44).
	var overCP []string
	for _, m := range modes {
		if r, ok := runs[m.Name]; ok && r.Figures.CriticalPath > 0 {
			overCP = append(overCP, fmt.Sprintf("%s %.2f", m.Name, r.Figures.Ready.Seconds()/r.Figures.CriticalPath.Seconds()))
		}
	}
	if len(overCP) > 0 {
		parts = append(parts, "wall/critical path "+strings.Join(overCP, ", "))
	}
	if okS && okF && fa.Figures.Ready > 0 {
		ratio := st.Figures.Ready.Seconds() / fa.Figures.Ready.Seconds()
		if !goal {
			parts = append(parts, fmt.Sprintf("stock/fast %.2f", ratio))
		} else {
			verdict := "holds"
			if ratio > goalRatio {
				verdict = "MISSED"
			}
			parts = append(parts, fmt.Sprintf("stock/fast %.2f (goal ≤ %.1f: %s)", ratio, goalRatio, verdict))
		}
	}
	return strings.Join(parts, " | ")
}

// recordSummary records the summary line of a case.
func recordSummary(caseName, line string) {
	summary.Lock()
	defer summary.Unlock()
	if summary.lines == nil {
		summary.lines = map[string]string{}
	}
	summary.lines[caseName] = line
}

// recordTable records the per-layer table of one deployment.
func recordTable(title string, d *Deployment) {
	summary.Lock()
	defer summary.Unlock()
	if summary.tables == nil {
		summary.tables = map[string]string{}
	}
	summary.tables[title] = fmt.Sprintf("  %s (critical path %s):\n%s", title, strings.Join(d.Figures.Path, " -> "), table(d.Layers))
}

// figuresLine is "ready 14.2s, critical path 13.1s, failed 0".
func figuresLine(f Figures) string {
	return fmt.Sprintf("ready %.1fs, critical path %.1fs, failed %d", f.Ready.Seconds(), f.CriticalPath.Seconds(), f.Failed)
}

// writeSummary prints the summary lines, sorted by case, to stdout and to
// $FLUXPACK_E2E_SUMMARY when set (make e2e prints that file).
func writeSummary() error {
	summary.Lock()
	defer summary.Unlock()
	if len(summary.runs) == 0 && len(summary.lines) == 0 {
		return nil
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(summary.runs)) {
		fmt.Fprintf(&b, "%s %s\n", k, runLine(summary.runs[k], strings.HasSuffix(k, " fluxpack") || k == "R0 clean"))
	}
	for _, k := range slices.Sorted(maps.Keys(summary.lines)) {
		fmt.Fprintf(&b, "%s %s\n", k, summary.lines[k])
	}
	b.WriteString("\nper layer (time from applying the root objects):\n")
	for _, title := range slices.Sorted(maps.Keys(summary.tables)) {
		b.WriteString(summary.tables[title])
	}
	fmt.Print(b.String())
	if p := os.Getenv("FLUXPACK_E2E_SUMMARY"); p != "" {
		return os.WriteFile(p, []byte(b.String()), 0o644)
	}
	return nil
}
