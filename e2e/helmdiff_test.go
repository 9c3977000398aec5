//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// releaseChart is fluxbuild's test chart, the one testutil.ReleaseCases
// render.
var releaseChart = filepath.Join("..", "fluxbuild", "testdata", "charts", "secrets-operator")

// TestHelmMatchesController holds fluxbuild.RenderRelease (what lint and
// preview show) to a real helm-controller: every case of
// testutil.ReleaseCases is installed by helm-controller from the chart
// pushed as an OCI chart, each HelmRelease in a namespace of its own with
// the case's ConfigMaps and Secrets, and the manifest helm-controller
// stored for the release must equal the one fluxbuild renders for the same
// HelmRelease, byte for byte; a case fluxbuild refuses must fail in
// helm-controller too.
func TestHelmMatchesController(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, Stock)
	chart := pushChart(t, c, releaseChart)
	c.create(chart.Source())
	// Every release starts from the chart's artifact.
	c.poll("OCIRepository/"+fluxNamespace+"/"+chart.Name+" Ready", reconcileDeadline, func(ctx context.Context) (bool, error) {
		var repo sourcev1.OCIRepository
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: chart.Name}, &repo); err != nil {
			return false, err
		}
		return apimeta.IsStatusConditionTrue(repo.Status.Conditions, meta.ReadyCondition) && repo.Status.ObservedGeneration == repo.Generation, nil
	})

	cases := testutil.ReleaseCases()
	created := map[string]bool{}
	namespace := func(name string) {
		if name == "" || created[name] {
			return
		}
		created[name] = true
		c.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	type run struct {
		tc       testutil.ReleaseCase
		hr       *helmv2.HelmRelease
		sources  []runtime.Object
		rejected error // the API server refused the HelmRelease
	}
	runs := make([]*run, len(cases))
	for i, tc := range cases {
		ns := fmt.Sprintf("hd-%02d", i)
		namespace(ns)
		namespace(tc.Spec.TargetNamespace)
		r := &run{tc: tc, hr: tc.Release(ns)}
		for _, s := range tc.Sources {
			obj := s.DeepCopyObject().(client.Object)
			obj.SetNamespace(ns)
			c.create(obj)
			r.sources = append(r.sources, obj)
		}
		// The controller's own copy: the chart from the OCIRepository,
		// no waiting for workloads (it changes nothing rendered).
		hr := r.hr.DeepCopy()
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: chart.Name, Namespace: fluxNamespace}
		hr.Spec.Interval = metav1.Duration{Duration: 10 * time.Minute}
		if hr.Spec.Install == nil {
			hr.Spec.Install = &helmv2.Install{}
		}
		hr.Spec.Install.DisableWait = true
		hr.Spec.Install.Remediation = &helmv2.InstallRemediation{Retries: 0}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		r.rejected = c.Client.Create(ctx, hr)
		cancel()
		if r.rejected != nil {
			require.True(t, apierrors.IsInvalid(r.rejected), "creating HelmRelease of case %s: %v", tc.Name, r.rejected)
		}
		runs[i] = r
	}

	identical, failedAlike := 0, 0
	for _, r := range runs {
		name := r.tc.Name
		want, renderErr := fluxbuild.RenderRelease(t.Context(), r.hr, releaseChart, fluxbuild.WithValuesFrom(r.sources...))
		if r.rejected != nil {
			require.Error(t, renderErr, "case %s: the API server refused the HelmRelease (%v), fluxbuild rendered it", name, r.rejected)
			failedAlike++
			continue
		}
		ready := waitRelease(t, c, r.hr)
		if r.tc.WantErr != "" {
			require.Error(t, renderErr, "case %s", name)
			require.Equal(t, metav1.ConditionFalse, ready.Status, "case %s: fluxbuild fails (%v), helm-controller installed it", name, renderErr)
			if !strings.HasPrefix(r.tc.WantErr, "spec.") { // fluxbuild's own clause, not the cause's text
				// The case's objects live in its own namespace here.
				want := strings.ReplaceAll(r.tc.WantErr, "'flux-system/", "'"+r.hr.Namespace+"/")
				assert.Contains(t, ready.Message, want, "case %s: helm-controller's failure", name)
			}
			t.Logf("case %s: both fail; helm-controller: %s; fluxbuild: %v", name, ready.Message, renderErr)
			failedAlike++
			continue
		}
		require.NoError(t, renderErr, "case %s", name)
		require.Equal(t, metav1.ConditionTrue, ready.Status, "case %s: fluxbuild renders it, helm-controller failed: %s", name, ready.Message)
		got := storedManifest(t, c, r.hr.GetStorageNamespace(), want.Name)
		if diff := cmp.Diff(got, string(want.Manifest)); diff != "" {
			t.Errorf("case %s: the manifest helm-controller installed differs from fluxbuild's (-helm-controller +fluxbuild):\n%s", name, diff)
			continue
		}
		identical++
	}
	recordSummary("H0", fmt.Sprintf("helm-controller vs fluxbuild.RenderRelease: %d cases, %d manifests identical, %d failing in both, %d differing",
		len(runs), identical, failedAlike, len(runs)-identical-failedAlike))
}

// waitRelease waits until helm-controller has handled hr's generation and
// says Ready True, or False for a reason other than progress; it returns
// that condition.
func waitRelease(t *testing.T, c *Cluster, hr *helmv2.HelmRelease) metav1.Condition {
	t.Helper()
	var cond metav1.Condition
	key := client.ObjectKeyFromObject(hr)
	c.poll("HelmRelease/"+key.String()+" to be handled", reconcileDeadline, func(ctx context.Context) (bool, error) {
		var got helmv2.HelmRelease
		if err := c.Client.Get(ctx, key, &got); err != nil {
			return false, err
		}
		r := apimeta.FindStatusCondition(got.Status.Conditions, meta.ReadyCondition)
		// The condition's own generation: a HelmRelease that failed
		// before installing has no status.observedGeneration yet.
		if r == nil || r.ObservedGeneration != got.Generation || r.Reason == meta.ProgressingReason {
			return false, nil
		}
		if r.Status == metav1.ConditionFalse && r.Reason == meta.DependencyNotReadyReason {
			return false, nil
		}
		cond = *r
		return r.Status != metav1.ConditionUnknown, nil
	})
	return cond
}

// storedManifest is the manifest of the latest release named release that
// helm-controller stored in namespace: Helm's Secret storage driver keeps
// each release, gzip-compressed JSON in base64, in the Secret
// sh.helm.release.v1.NAME.vN labelled owner=helm, name=NAME.
func storedManifest(t *testing.T, c *Cluster, namespace, release string) string {
	t.Helper()
	var list corev1.SecretList
	require.NoError(t, c.Client.List(t.Context(), &list, client.InNamespace(namespace),
		client.MatchingLabels{"owner": "helm", "name": release}))
	var latest *corev1.Secret
	for i := range list.Items {
		s := &list.Items[i]
		if latest == nil || s.Labels["version"] > latest.Labels["version"] {
			latest = s
		}
	}
	require.NotNil(t, latest, "no release Secret of %s in %s", release, namespace)
	raw, err := base64.StdEncoding.DecodeString(string(latest.Data["release"]))
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	var rel struct {
		Manifest string `json:"manifest"`
	}
	require.NoError(t, json.Unmarshal(data, &rel))
	return rel.Manifest
}
