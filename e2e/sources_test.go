//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/sources"
)

// TestSourcesMatchController (O0) holds `--sources online` to
// source-controller: the same GitRepositories (a Git server on loopback:
// branch, annotated tag, semver range, commit), OCIRepositories (the
// registry: tag, semver range with a filter, digest) and HelmCharts (an
// HTTP Helm repository and an OCI one, at version ranges) are fetched by
// package sources and reconciled by source-controller, and each resolves
// to the same revision.
func TestSourcesMatchController(t *testing.T) {
	c := StartCluster(t, Stock)
	f, err := sources.New(t.TempDir())
	require.NoError(t, err)

	// Git.
	gitRoot, work := t.TempDir(), t.TempDir()
	writeFiles(t, work, map[string][]byte{"apps/cm.yaml": []byte("v: 1\n")})
	testutil.Git(t, work, "init", "-q", "-b", "main")
	testutil.Git(t, work, "add", "-A")
	testutil.Git(t, work, "commit", "-q", "-m", "one")
	testutil.Git(t, work, "tag", "v1.0.0")
	first := testutil.Git(t, work, "rev-parse", "HEAD")
	writeFiles(t, work, map[string][]byte{"apps/cm.yaml": []byte("v: 2\n")})
	testutil.Git(t, work, "commit", "-q", "-am", "two")
	testutil.Git(t, work, "tag", "-a", "v1.1.0", "-m", "release")
	writeFiles(t, work, map[string][]byte{"apps/cm.yaml": []byte("v: 3\n")})
	testutil.Git(t, work, "commit", "-q", "-am", "three")
	testutil.Git(t, work, "tag", "v2.0.0-rc.1")
	testutil.Git(t, gitRoot, "clone", "-q", "--bare", work, "platform.git")
	git := testutil.NewGitServer(t, gitRoot)
	gitRefs := map[string]*sourcev1.GitRepositoryRef{
		"branch":   {Branch: "main"},
		"tag":      {Tag: "v1.1.0"},
		"semver":   {SemVer: ">=1.0.0"},
		"commit":   {Commit: first},
		"refname":  {Name: "refs/tags/v1.0.0"},
		"semver-x": {SemVer: "1.0.x", Tag: "v1.1.0"},
	}

	// OCI.
	url := "oci://" + c.Registry.Host + "/sources/apps"
	var digest string
	for _, v := range []string{"1.0.0", "1.2.0", "1.3.0-rc.1", "latest"} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string][]byte{"apps/cm.yaml": []byte("v: " + v + "\n")})
		res, err := oci.Push(t.Context(), dir, url+":"+v, oci.WithSource("e2e"), oci.WithRevision(v))
		require.NoError(t, err)
		if v == "1.0.0" {
			digest = res.Digest
		}
	}
	ociRefs := map[string]*sourcev1.OCIRepositoryRef{
		"none":   nil,
		"tag":    {Tag: "1.0.0"},
		"semver": {SemVer: ">=1.0.0"},
		"filter": {SemVer: ">=1.0.0-0", SemverFilter: ".*-rc.*"},
		"digest": {Digest: digest},
		"both":   {SemVer: ">=1.0.0", Tag: "1.0.0"},
	}

	// Helm: an HTTP repository and an OCI one.
	chart, digest := testutil.PackagedTestChart(t)
	helmURL := testutil.ServeHelmRepo(t, testutil.HelmIndex(digest, "0.3.1", "0.3.2", "0.4.0-rc.1"), chart).URL
	for _, v := range []string{"0.3.1", "0.3.2", "0.4.0-rc.1"} {
		testutil.PushChart(t, testutil.TestChart(t), c.Registry.Host+"/sources/charts/secrets-operator:"+v)
	}
	c.create(&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Name: "http", Namespace: fluxNamespace},
		Spec: sourcev1.HelmRepositorySpec{URL: helmURL, Interval: metav1.Duration{Duration: time.Hour}}})
	c.create(&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Name: "oci", Namespace: fluxNamespace},
		Spec: sourcev1.HelmRepositorySpec{URL: "oci://" + c.Registry.Host + "/sources/charts", Type: sourcev1.HelmRepositoryTypeOCI, Insecure: true, Interval: metav1.Duration{Duration: time.Hour}}})
	charts := map[string][2]string{ // name → repository, version
		"http-range":  {"http", "0.3.x"},
		"http-latest": {"http", ""},
		"http-pre":    {"http", ">=0.4.0-0"},
		"oci-range":   {"oci", "0.3.x"},
		"oci-latest":  {"oci", "*"},
	}

	type want struct{ kind, name, ours string }
	var wants []want
	for name, ref := range gitRefs {
		obj := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "git-" + name, Namespace: fluxNamespace},
			Spec: sourcev1.GitRepositorySpec{URL: git.URL + "/platform.git", Reference: ref, Interval: metav1.Duration{Duration: time.Hour}}}
		a, err := f.GitRepository(t.Context(), obj.DeepCopy())
		require.NoError(t, err, name)
		c.create(obj)
		wants = append(wants, want{sourcev1.GitRepositoryKind, obj.Name, a.Revision})
	}
	for name, ref := range ociRefs {
		obj := &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "oci-" + name, Namespace: fluxNamespace},
			Spec: sourcev1.OCIRepositorySpec{URL: url, Reference: ref, Insecure: true, Interval: &metav1.Duration{Duration: time.Hour}}}
		a, err := f.OCIRepository(t.Context(), obj.DeepCopy())
		require.NoError(t, err, name)
		c.create(obj)
		wants = append(wants, want{sourcev1.OCIRepositoryKind, obj.Name, a.Revision})
	}
	for name, cv := range charts {
		repoURL := helmURL
		if cv[0] == "oci" {
			repoURL = "oci://" + c.Registry.Host + "/sources/charts"
		}
		a, err := f.Chart(t.Context(), repoURL, "secrets-operator", cv[1])
		require.NoError(t, err, name)
		c.create(&sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Name: "chart-" + name, Namespace: fluxNamespace},
			Spec: sourcev1.HelmChartSpec{Chart: "secrets-operator", Version: cv[1], SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: cv[0]}, Interval: metav1.Duration{Duration: time.Hour}}})
		wants = append(wants, want{sourcev1.HelmChartKind, "chart-" + name, a.Revision})
	}

	var line []string
	same := 0
	for _, w := range wants {
		got := artifactRevision(t, c, w.kind, w.name)
		if assert.Equal(t, got, w.ours, "%s/%s: source-controller's revision against fluxpack's", w.kind, w.name) {
			same++
		}
		line = append(line, fmt.Sprintf("%s/%s %s", w.kind, w.name, got))
	}
	t.Logf("O0 revisions:\n  %s", strings.Join(line, "\n  "))

	// What the sources lack: the `source` and `chart` findings of
	// --sources online, and source-controller's failure, alike.
	missGit := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "git-missing", Namespace: fluxNamespace},
		Spec: sourcev1.GitRepositorySpec{URL: git.URL + "/platform.git", Reference: &sourcev1.GitRepositoryRef{Tag: "v9.9.9"}, Interval: metav1.Duration{Duration: time.Hour}}}
	_, ourGit := f.GitRepository(t.Context(), missGit.DeepCopy())
	require.Error(t, ourGit)
	assert.True(t, sources.IsNotFound(ourGit), "%v", ourGit)
	c.create(missGit)
	theirGit := failure(t, c, sourcev1.GitRepositoryKind, missGit.Name)
	wantGit := `couldn't find remote ref "refs/tags/v9.9.9"`
	assert.Contains(t, ourGit.Error(), wantGit)
	assert.Contains(t, theirGit, wantGit)

	_, ourChart := f.Chart(t.Context(), helmURL, "secrets-operator", ">=9.0.0")
	require.Error(t, ourChart)
	assert.True(t, sources.IsNotFound(ourChart), "%v", ourChart)
	c.create(&sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Name: "chart-missing", Namespace: fluxNamespace},
		Spec: sourcev1.HelmChartSpec{Chart: "secrets-operator", Version: ">=9.0.0", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "http"}, Interval: metav1.Duration{Duration: time.Hour}}})
	theirChart := failure(t, c, sourcev1.HelmChartKind, "chart-missing")
	wantChart := "no 'secrets-operator' chart with version matching '>=9.0.0' found"
	assert.Contains(t, ourChart.Error(), wantChart)
	assert.Contains(t, theirChart, wantChart)

	missOCI := &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: "oci-missing", Namespace: fluxNamespace},
		Spec: sourcev1.OCIRepositorySpec{URL: url, Reference: &sourcev1.OCIRepositoryRef{Tag: "9.9.9"}, Insecure: true, Interval: &metav1.Duration{Duration: time.Hour}}}
	_, ourOCI := f.OCIRepository(t.Context(), missOCI.DeepCopy())
	require.Error(t, ourOCI)
	assert.True(t, sources.IsNotFound(ourOCI), "%v", ourOCI)
	c.create(missOCI)
	theirOCI := failure(t, c, sourcev1.OCIRepositoryKind, missOCI.Name)
	t.Logf("O0 missing: git: ours %q, source-controller %q; chart: ours %q, source-controller %q; oci: ours %q, source-controller %q", ourGit, theirGit, ourChart, theirChart, ourOCI, theirOCI)

	recordSummary("O0", fmt.Sprintf("--sources online resolves as source-controller: %d of %d sources at the same revision (%d GitRepositories, %d OCIRepositories, %d HelmCharts); a missing tag, range and OCI tag fail on both sides (%q, %q)", same, len(wants), len(gitRefs), len(ociRefs), len(charts), wantGit, wantChart))
}

// failure waits until source-controller fails the source and returns its
// Ready message.
func failure(t *testing.T, c *Cluster, kind, name string) string {
	t.Helper()
	key := client.ObjectKey{Namespace: fluxNamespace, Name: name}
	var msg string
	c.poll(kind+"/"+key.String()+" to fail", 2*time.Minute, func(ctx context.Context) (bool, error) {
		obj := sourceObject(kind)
		if err := c.Client.Get(ctx, key, obj); err != nil {
			return false, err
		}
		r := apimeta.FindStatusCondition(obj.GetConditions(), meta.ReadyCondition)
		if r == nil || r.Status != metav1.ConditionFalse || r.Reason == meta.ProgressingReason {
			return false, nil
		}
		msg = r.Message
		return true, nil
	})
	return msg
}

// source is what the e2e reads of a source's status.
type source interface {
	client.Object
	GetArtifact() *meta.Artifact
	GetConditions() []metav1.Condition
}

func sourceObject(kind string) source {
	switch kind {
	case sourcev1.GitRepositoryKind:
		return &sourcev1.GitRepository{}
	case sourcev1.OCIRepositoryKind:
		return &sourcev1.OCIRepository{}
	default:
		return &sourcev1.HelmChart{}
	}
}

// artifactRevision waits until source-controller has an artifact for the
// source and returns its revision.
func artifactRevision(t *testing.T, c *Cluster, kind, name string) string {
	t.Helper()
	key := client.ObjectKey{Namespace: fluxNamespace, Name: name}
	var rev string
	c.poll(kind+"/"+key.String()+" to have an artifact", 2*time.Minute, func(ctx context.Context) (bool, error) {
		obj := sourceObject(kind)
		if err := c.Client.Get(ctx, key, obj); err != nil {
			return false, err
		}
		if r := apimeta.FindStatusCondition(obj.GetConditions(), meta.ReadyCondition); r != nil && r.Status == metav1.ConditionFalse && r.Reason != meta.ProgressingReason {
			return false, fmt.Errorf("%s/%s: %s", kind, name, r.Message)
		}
		if a := obj.GetArtifact(); a != nil {
			rev = a.Revision
			return true, nil
		}
		return false, nil
	})
	return rev
}
