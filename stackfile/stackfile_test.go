package stackfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// The stack file and the Go builder are one model: the same stack renders
// byte for byte the same.
func TestStackFileMatchesBuilder(t *testing.T) {
	fromFile, err := stackfile.Load("testdata/stacks/external-secrets.yaml")
	require.NoError(t, err)
	filePlan, err := fromFile.Build()
	require.NoError(t, err)

	goPlan, err := layering.New("external-secrets",
		layering.FromOCI("oci://registry.example.com/platform", "v1"),
		layering.Namespace("flux-system"),
		layering.Interval(10*time.Minute),
		layering.Vars("cluster-vars"),
	).
		Layer("crds", layering.Path("./crds"), layering.KeepOnDelete(), layering.Wait()).
		Then("operator", layering.Path("./operator"), layering.Wait(), layering.MarkOperator()).
		Then("crs", layering.Path("./crs"),
			layering.ReadyExpr("operator", "dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"),
			layering.RetryInterval(time.Minute),
			layering.Substitute(map[string]string{"cluster_name": "mycluster-0"}),
			layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "app-secrets", Optional: true}),
		).
		Build()
	require.NoError(t, err)

	want, got := renderPlan(t, goPlan), renderPlan(t, filePlan)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("stack file and builder differ (-builder +file):\n%s", diff)
	}
	assert.Equal(t, "testdata/stacks/external-secrets.yaml", filePlan.Layers[2].File)
	assert.Equal(t, 11, filePlan.Layers[2].Line)
	testutil.Golden(t, "stack-external-secrets", got)
}

func TestStackFileStrict(t *testing.T) {
	_, err := stackfile.Load("testdata/stacks/unknown-field.yaml")
	require.ErrorIs(t, err, stackfile.ErrInvalid)
	var fe *layering.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 5, fe.Line)
	testutil.Golden(t, "stack-unknown-field", []byte(err.Error()+"\n"))
}

func TestStackFileErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "x.yaml: empty stack file"},
		{"syntax", "a: [b\n", "x.yaml:1: yaml:"},
		{"two-documents", "apiVersion: fluxpack.dev/v1alpha1\n---\nkind: Stack\n", "x.yaml:2: want one YAML document"},
		{"wrong-kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\nspec: {sourceRef: {kind: GitRepository, name: flux-system}, layers: [{name: a}]}\n",
			"x.yaml:1: apiVersion \"v1\": want fluxpack.dev/v1alpha1"},
		{"no-source", "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: s}\nspec:\n  layers: [{name: a}]\n", "x.yaml:5: spec.source (an OCIRepository) or spec.sourceRef is required"},
		{"no-layer-name", "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: s}\nspec:\n  sourceRef: {kind: GitRepository, name: flux-system}\n  layers:\n    - path: ./a\n", "x.yaml:7: spec.layers[0].name is required"},
		{"list-for-string", "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: [s]}\n", "x.yaml:3: metadata.name: want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stackfile.Parse("x.yaml", []byte(tt.data))
			require.ErrorIs(t, err, stackfile.ErrInvalid, "Parse(%q)", tt.data)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Problems the builder finds point at the layer's line in the stack file.
func TestStackFileBuildErrorsHaveLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stack.yaml")
	require.NoError(t, os.WriteFile(p, []byte(`apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata: {name: platform}
spec:
  sourceRef: {kind: GitRepository, name: flux-system}
  layers:
    - {name: a, dependsOn: [b]}
    - {name: b, dependsOn: [a]}
    - {name: Bad_Name}
`), 0o644))
	b, err := stackfile.Load(p)
	require.NoError(t, err)
	_, err = b.Build()
	require.ErrorIs(t, err, layering.ErrCycle)
	assert.Contains(t, err.Error(), p+`:9: layer "Bad_Name": name must match`)
	assert.Contains(t, err.Error(), p+`:7: layer "a": dependency cycle a -> b -> a`)
}

// StackFile writes a Builder back as a stack file that builds the same
// Plan: every stack file of the repository (examples included), and stacks
// made in Go with presets, guards and HelmRelease layers.
func TestStackFileRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../examples/*/platform/*.yaml")
	require.NoError(t, err)
	files = append(files, "testdata/stacks/external-secrets.yaml")
	builders := map[string]*layering.Builder{}
	for _, f := range files {
		b, err := stackfile.Load(f)
		if err != nil {
			continue // not a stack file (an example's other YAML)
		}
		builders[f] = b
	}
	require.GreaterOrEqual(t, len(builders), 6)
	builders["go:operator-preset"] = layering.New("p", layering.FromOCI("oci://registry.example.com/p", "v1"), layering.Vars("vars")).
		Add(layering.Operator("es", layering.OperatorWebhook(layering.ValidatingWebhook, "es-webhook"),
			layering.OperatorLayer(layering.HelmRelease(layering.Chart(helmv2.HelmChartTemplateSpec{Chart: "external-secrets", Version: "0.9.x", SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "es"}}),
				layering.Values(map[string]any{"installCRDs": false, "replicas": 2}), layering.CreateNamespace())))).
		Then("apps", layering.Images(kustomize.Image{Name: "app", NewTag: "v2"}), layering.NamePrefix("x-"), layering.SubstituteAlways())
	for name, b := range builders {
		t.Run(name, func(t *testing.T) {
			want, err := b.Build()
			require.NoError(t, err)
			data, err := stackfile.Marshal(b)
			require.NoError(t, err)
			back, err := stackfile.Parse("round-trip.yaml", data)
			require.NoError(t, err, "%s", data)
			got, err := back.Build()
			require.NoError(t, err)
			if diff := cmp.Diff(string(renderPlan(t, want)), string(renderPlan(t, got))); diff != "" {
				t.Errorf("the written stack builds another plan (-loaded +written):\n%s\nstack file:\n%s", diff, data)
			}
		})
	}
}

// A YAML error in a stack file names the file's line, counted from 1
// (the YAML library counts its parser's errors from 0), and the message
// does not repeat the library's count.
func TestStackSyntaxErrorLine(t *testing.T) {
	head := "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: demo, namespace: flux-system}\nspec:\n  source: {url: oci://r.example.com/demo, tag: v1}\n" // 5 lines
	tests := []struct {
		name, data string
		line       int
	}{
		{name: "a key out of place on line 7", data: head + "  layers: []\n wait: true\n", line: 7},
		{name: "a layer item's second line out of place on line 8", data: head + "  layers:\n    - name: crds\n     path: ./crds\n", line: 8},
		{name: "a key out of place on line 11, deep in spec", data: head + "  layers:\n    - name: crds\n      path: ./crds\n      wait: true\n      timeout: 5m\n     prune: true\n", line: 11},
		{name: "a scanner error on line 7", data: head + "  layers:\n    - name: a: b\n", line: 7},
		{name: "an unclosed flow sequence on line 7", data: head + "  layers:\n    - {name: a, dependsOn: [b}\n", line: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stackfile.Parse("stack.yaml", []byte(tt.data))
			require.ErrorIs(t, err, stackfile.ErrInvalid)
			var fe *layering.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.line, fe.Line, "%v", err)
			assert.NotContains(t, err.Error(), "yaml: line", "the library's own count is left out")
		})
	}
}

// Once decodes the file once and gives each call a Builder of its
// own that is Load's: the same stack file back, and a change to one
// (a fleet's cluster turning a layer off) seen by no other.
func TestOnce(t *testing.T) {
	for _, p := range []string{
		"../fleet/testdata/fleet/stack.yaml",
		"testdata/stacks/external-secrets.yaml",
		"../examples/demo/platform/stack.yaml",
		"../examples/platform-hierarchy/platform/stack.yaml",
		"../examples/iac-bridge/platform/stack.yaml",
		"../e2e/testdata/s1/stack.yaml",
	} {
		t.Run(p, func(t *testing.T) {
			want, err := stackfile.Load(p)
			require.NoError(t, err)
			wantFile, err := stackfile.Marshal(want)
			require.NoError(t, err)
			load := stackfile.Once(p)
			first, err := load()
			require.NoError(t, err)
			firstPlan, err := first.Build()
			require.NoError(t, err)
			// Change the first Builder: the next call must not see it.
			first.Then("extra-layer", layering.DependsOn(firstPlan.Layers[0].Name), layering.Substitute(map[string]string{"x": "y"}))
			second, err := load()
			require.NoError(t, err)
			gotFile, err := stackfile.Marshal(second)
			require.NoError(t, err)
			assert.Equal(t, string(wantFile), string(gotFile), "Once(%s)() is Load's stack", p)
			wantPlan, err := want.Build()
			require.NoError(t, err)
			gotPlan, err := second.Build()
			require.NoError(t, err)
			assert.Equal(t, wantPlan, gotPlan)
		})
	}
	_, err := stackfile.Once("testdata/stacks/unknown-field.yaml")()
	require.ErrorIs(t, err, stackfile.ErrInvalid)
	_, err = stackfile.Once("testdata/no-such-stack.yaml")()
	require.ErrorContains(t, err, "reading stack testdata/no-such-stack.yaml")
}
