//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxpack/fluxpack/fleet"
)

// TestFleet is issue 19's proof: one fleet file, two clusters (each a
// control plane of its own), different Terraform outputs, prod without the
// monitoring layer. `fluxpack push --fleet` pushes both artifacts; staging
// follows its tag main, prod its tag live, which `fluxpack promote` moves.
// Each cluster reconciles its own artifact with zero failed reconciles and
// carries its own values; a new push reaches staging only, and promoting it
// changes what prod runs and nothing on staging.
func TestFleet(t *testing.T) {
	t.Parallel()
	staging, prod := StartCluster(t, Stock), StartCluster(t, Stock)
	host := staging.Registry.Host // one registry for the fleet, as in real life
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "fleet"), dir)
	file := filepath.Join(dir, "fleet.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), "REGISTRY", host, 1)), 0o644))
	f, err := fleet.Load(file)
	require.NoError(t, err)

	pushFleet := func() map[string]fleet.Result {
		t.Helper()
		var res []fleet.Result
		require.NoError(t, json.Unmarshal(fluxpack(t, "push", "--fleet", file, "--insecure-registry", "-o", "json",
			"--source", "https://github.com/fluxpack/fluxpack", "--revision", "main@sha1:"+strings.Repeat("0", 40)), &res))
		out := map[string]fleet.Result{}
		for _, r := range res {
			out[r.Cluster] = r
		}
		return out
	}
	first := pushFleet()
	require.Equal(t, fleet.Pushed, first["staging"].Status)
	require.Equal(t, fleet.Pushed, first["prod"].Status)
	repo := func(cluster string) string { return fmt.Sprintf("oci://%s/fleet/%s", host, cluster) }
	fluxpack(t, "promote", repo("prod")+":live", "--from", "main", "--insecure-registry")

	// Each cluster: its wake Secret (its own receiver), then its root.
	deploy := func(c *Cluster, cluster, tag, digest string) *Deployment {
		t.Helper()
		b, err := f.Stack(cluster)
		require.NoError(t, err)
		plan, err := b.Build()
		require.NoError(t, err)
		secret, err := plan.Wake.Secret(c.ReceiverURL, rand.Text())
		require.NoError(t, err)
		c.create(secret)
		obs := c.Observe(rootName)
		obs.Begin(tag + "@" + digest)
		applyRootAt(t, c, repo(cluster), tag, "clusters")
		names := layerNames(plan)
		obs.WaitReady(append([]string{rootName}, names...)...)
		d := &Deployment{c: c, Observer: obs, Dir: dir, Names: names}
		d.Layers = obs.Report()
		AssertOrder(t, d.Layers)
		d.Figures = Summarise(d.Layers, rootName)
		d.RequireNoFailures(t)
		return d
	}
	ds := deploy(staging, "staging", "main", first["staging"].Digest)
	dp := deploy(prod, "prod", "live", first["prod"].Digest)
	assert.Contains(t, ds.Names, "monitoring")
	assert.NotContains(t, dp.Names, "monitoring", "prod runs without monitoring")

	app := func(c *Cluster) map[string]string {
		t.Helper()
		var cm corev1.ConfigMap
		require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: "platform", Name: "app"}, &cm))
		return cm.Data
	}
	settings := func(c *Cluster) map[string]string {
		t.Helper()
		var cm corev1.ConfigMap
		require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: "platform", Name: "settings"}, &cm))
		return cm.Data
	}
	assert.Equal(t, map[string]string{"cluster": "staging-eu", "region": "eu-west-3"}, settings(staging))
	assert.Equal(t, map[string]string{"cluster": "prod-eu", "region": "eu-west-1"}, settings(prod))
	assert.Equal(t, map[string]string{"release": "v1", "tier": "standard", "region": "eu-west-3"}, app(staging))
	assert.Equal(t, map[string]string{"release": "v1", "tier": "prod", "region": "eu-west-1"}, app(prod))
	ok, err := exists(t.Context(), prod, "v1", "ConfigMap", "platform", "monitoring")
	require.False(t, ok, "prod has monitoring's ConfigMap (%v)", err)

	// Release v2: one fleet push moves both main tags; staging applies it,
	// prod (on live) does not.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apps", "app.yaml"),
		[]byte(strings.Replace(mustRead(t, filepath.Join(dir, "apps", "app.yaml")), "release: v1", "release: v2", 1)), 0o644))
	second := pushFleet()
	require.Equal(t, fleet.Pushed, second["staging"].Status)
	require.Equal(t, fleet.Pushed, second["prod"].Status)
	ds.Observer.Begin("main@" + second["staging"].Digest)
	ds.Reconcile(t)
	ds.Observer.WaitReady(append([]string{rootName}, ds.Names...)...)
	assert.Equal(t, "v2", app(staging)["release"])
	st := dp.Reconcile(t)
	require.Equal(t, "live@"+first["prod"].Digest, st.Artifact.Revision, "prod moved without a promotion")
	assert.Equal(t, "v1", app(prod)["release"])

	// Promote: prod runs v2, with its own values; staging is untouched.
	fluxpack(t, "promote", "--fleet", file, "prod", "--from", "prod", "--insecure-registry") // a no-op: same tag
	fluxpack(t, "promote", repo("prod")+":live", "--from", "main", "--insecure-registry")
	dp.Observer.Begin("live@" + second["prod"].Digest)
	st = dp.Reconcile(t)
	require.Equal(t, "live@"+second["prod"].Digest, st.Artifact.Revision)
	dp.Observer.WaitReady(append([]string{rootName}, dp.Names...)...)
	for _, l := range dp.Observer.Report() {
		require.Zero(t, l.Failures, "Kustomization/%s/%s failed after the promotion: %v", fluxNamespace, l.Name, l.Messages)
	}
	assert.Equal(t, map[string]string{"release": "v2", "tier": "prod", "region": "eu-west-1"}, app(prod))
	st = ds.Reconcile(t)
	assert.Equal(t, "main@"+second["staging"].Digest, st.Artifact.Revision, "the promotion moved staging")

	third := pushFleet()
	recordSummary("F0", fmt.Sprintf("fleet of 2 clusters from one fleet file: staging %d layers (ready %.1fs, failed %d), prod %d layers without monitoring (ready %.1fs, failed %d); "+
		"each carries its own outputs; push v2 moved staging only; promote live→v2 moved prod only; an unchanged fleet push: %s, %s",
		len(ds.Names), ds.Figures.Ready.Seconds(), ds.Figures.Failed, len(dp.Names), dp.Figures.Ready.Seconds(), dp.Figures.Failed,
		third["staging"].Status, third["prod"].Status))
	assert.Equal(t, fleet.Unchanged, third["staging"].Status)
	assert.Equal(t, fleet.Unchanged, third["prod"].Status)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
