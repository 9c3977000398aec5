package fleet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/render"
	"github.com/fluxpack/fluxpack/stackfile"
)

const fleetFile = "testdata/fleet/fleet.yaml"

// Each cluster's stack is the fleet's with the cluster's changes: its
// artifact as the OCIRepository, a layer off (its dependents wait for what
// it waited for), a layer's interval, extra variables, an extra layer.
func TestFleetStack(t *testing.T) {
	f, err := fleet.Load(fleetFile)
	require.NoError(t, err)
	require.NoError(t, f.Check())
	assert.Equal(t, []string{"staging", "prod"}, f.Clusters())
	u, err := f.Artifact("prod")
	require.NoError(t, err)
	assert.Equal(t, "oci://registry.example.com/platform/prod:main", u)

	staging := buildCluster(t, f, "staging")
	assert.Equal(t, []string{"namespaces", "platform", "observability", "apps"}, layerNames(staging))
	assert.Equal(t, "oci://registry.example.com/platform/staging", staging.Source.Spec.URL)
	assert.Equal(t, "main", staging.Source.Spec.Reference.Tag)

	prod := buildCluster(t, f, "prod")
	assert.Equal(t, []string{"namespaces", "platform", "apps", "backup"}, layerNames(prod))
	apps := layerOf(prod, "apps")
	assert.Equal(t, []string{"platform"}, apps.DependsOn, "observability is off: apps waits for what it waited for")
	assert.Equal(t, 5*time.Minute, apps.Kustomization.Spec.Interval.Duration)
	assert.Equal(t, 2*time.Minute, apps.Kustomization.Spec.Timeout.Duration)
	assert.Equal(t, 10*time.Minute, layerOf(prod, "platform").Kustomization.Spec.Interval.Duration, "the other layers keep the stack's")
	for _, l := range prod.Layers {
		assert.Equal(t, "prod", l.Kustomization.Spec.PostBuild.Substitute["tier"], "layer %s", l.Name)
	}
	assert.Nil(t, layerOf(staging, "apps").Kustomization.Spec.PostBuild.Substitute)
	assert.Equal(t, []string{"apps"}, layerOf(prod, "backup").DependsOn)
	assert.Equal(t, "./backup", layerOf(prod, "backup").Kustomization.Spec.Path)
	assert.NotNil(t, prod.Wake, "the stack's wake holds on every cluster")
}

func buildCluster(t *testing.T, f *fleet.Fleet, name string) *layering.Plan {
	t.Helper()
	b, err := f.Stack(name)
	require.NoError(t, err)
	p, err := b.Build()
	require.NoError(t, err)
	return p
}

func layerNames(p *layering.Plan) []string {
	var names []string
	for _, l := range p.Layers {
		names = append(names, l.Name)
	}
	return names
}

func layerOf(p *layering.Plan, name string) *layering.Layer {
	for i := range p.Layers {
		if p.Layers[i].Name == name {
			return &p.Layers[i]
		}
	}
	return nil
}

// RenderFleet writes out/<cluster>/ per cluster, each with its own
// OCIRepository and vars ConfigMap, and each cluster's Secrets outside out/.
func TestRenderFleet(t *testing.T) {
	f, err := fleet.Load(fleetFile)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "out")
	secrets := filepath.Join(t.TempDir(), "secrets")
	rs, err := fleet.Render(t.Context(), f, out, render.WithSecretDir(secrets))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, filepath.Join(out, "prod"), rs[1].Dir)
	assert.Equal(t, filepath.Join(secrets, "prod.secret.yaml"), rs[1].SecretFile)

	prod := testutil.ReadFiles(t, filepath.Join(out, "prod"))
	staging := testutil.ReadFiles(t, filepath.Join(out, "staging"))
	assert.NotContains(t, prod, "layers/observability.yaml")
	assert.Contains(t, staging, "layers/observability.yaml")
	assert.Contains(t, prod["vars/configmap-cluster-vars.yaml"], "cluster_name: prod-eu")
	assert.Contains(t, staging["vars/configmap-cluster-vars.yaml"], "cluster_name: staging-eu")
	testutil.Golden(t, "fleet-prod", []byte(prod["kustomization.yaml"]+"---\n"+prod["source.yaml"]+"---\n"+prod["layers/apps.yaml"]))
	for _, files := range []map[string]string{prod, staging} {
		for name, data := range files {
			assert.NotContains(t, data, "s3cr3t", "a sensitive output reached %s", name)
		}
	}
	data, err := os.ReadFile(filepath.Join(secrets, "prod.secret.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "czNjcjN0LXByb2Q=", "base64 of prod's sensitive output")
	assert.Contains(t, string(data), "name: platform-wake")
}

// A fleet with any problem is refused whole, each problem naming the
// cluster and its line, and nothing is written.
func TestFleetErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/fleet")))
	tests := []struct {
		name, fleet string
		want        []string
	}{
		{"unknown field", strings.Replace(fleetYAML(t), "disable:", "disabel:", 1),
			[]string{`fleet.yaml:11: unknown field "disabel" in spec.clusters[1]`}},
		{"duplicate cluster", strings.Replace(fleetYAML(t), "name: prod", "name: staging", 1),
			[]string{`fleet.yaml:9: cluster "staging" declared twice (first at line 8)`}},
		{"unknown layer", strings.Replace(fleetYAML(t), "disable: [observability]", "disable: [observabilty]", 1),
			[]string{`fleet.yaml:9: cluster "prod": disable: the stack has no layer "observabilty"`}},
		{"no placeholder", strings.Replace(fleetYAML(t), "platform/{{cluster}}:main", "platform:main", 1),
			[]string{`cluster "staging": the fleet's artifact URL "oci://registry.example.com/platform:main" has no {{cluster}}`,
				`cluster "prod": the fleet's artifact URL`}},
		{"extra layer on unknown", strings.Replace(fleetYAML(t), "dependsOn: [apps]", "dependsOn: [app]", 1),
			[]string{`fleet.yaml:9: cluster "prod": invalid layer plan: `, `fleet.yaml:16: layer "backup": depends on unknown layer "app"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "fleet.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tt.fleet), 0o644))
			out := filepath.Join(t.TempDir(), "out")
			f, err := fleet.Load(file)
			if err == nil {
				_, err = fleet.Render(t.Context(), f, out)
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			_, statErr := os.Stat(out)
			assert.ErrorIs(t, statErr, os.ErrNotExist, "a bad fleet wrote %s", out)
		})
	}
}

func fleetYAML(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(fleetFile)
	require.NoError(t, err)
	return string(data)
}

// The Go builder has the fleet file's model.
func TestFleetBuilder(t *testing.T) {
	f := fleet.New("platform", func() (*layering.Builder, error) { return stackfile.Load("testdata/fleet/stack.yaml") },
		"oci://registry.example.com/platform:{{cluster}}").
		Cluster("dev", fleet.Disable("observability", "apps")).
		Cluster("edge", fleet.ClusterArtifact("oci://edge.example.com/platform:v1"), fleet.Override("apps", layering.NoWait())).
		Cluster("bad", fleet.Override("nope", layering.Wait()), nil)
	dev := buildCluster(t, f, "dev")
	assert.Equal(t, []string{"namespaces", "platform"}, layerNames(dev))
	assert.Equal(t, "oci://registry.example.com/platform", dev.Source.Spec.URL)
	assert.Equal(t, "dev", dev.Source.Spec.Reference.Tag)
	edge := buildCluster(t, f, "edge")
	assert.Equal(t, "oci://edge.example.com/platform", edge.Source.Spec.URL)
	assert.False(t, layerOf(edge, "apps").Kustomization.Spec.Wait)

	err := f.Check()
	require.Error(t, err)
	assert.ErrorContains(t, err, `cluster "bad": layers: the stack has no layer "nope"`)
	assert.ErrorContains(t, err, `cluster "bad": nil ClusterOption`)
	assert.ErrorIs(t, err, layering.ErrInvalidOption)
}

// Lint reports a finding every cluster has once, and each cluster's own.
func TestLintFleet(t *testing.T) {
	f, err := fleet.Load(fleetFile)
	require.NoError(t, err)
	rep, err := lint.Fleet(t.Context(), f)
	require.NoError(t, err)
	require.Len(t, rep.Clusters, 2)
	var got []string
	for _, fd := range rep.Shared {
		got = append(got, "all: "+fd.String())
	}
	for _, c := range rep.Clusters {
		for _, fd := range c.Report.Findings {
			got = append(got, c.Cluster+": "+fd.String())
		}
	}
	testutil.Golden(t, "fleet-lint", []byte(strings.Join(got, "\n")+"\n"))
}
