package preview_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/substitute"
)

// preview is fluxbuild.Preview with dir as ks's spec.path, as `fluxpack
// preview --path dir` runs it.
func preview(tb testing.TB, dir string, ks *kustomizev1.Kustomization, opts ...substitute.RenderOption) ([]byte, error) {
	k := ks.DeepCopy()
	k.Spec.Path = ""
	return fluxbuild.Preview(tb.Context(), fluxbuild.Source{Dir: dir}, k, opts...)
}

// cases are Kustomizations over the directories of testdata/, each built by
// fluxbuild.Preview and by Flux's own path (see fluxBuild).
var cases = []struct {
	name, dir, ks string
	fails         bool // both must fail
}{
	{name: "no-postbuild", dir: "plain", ks: `{}`, fails: false},
	{name: "inline-and-from", dir: "plain", ks: `{postBuild: {substitute: {bucket: inline-bucket, region: inline-wins}, substituteFrom: [{kind: ConfigMap, name: cluster-vars}, {kind: Secret, name: cluster-secrets}]}}`},
	{name: "optional-missing", dir: "plain", ks: `{postBuild: {substitute: {bucket: b, nginx_tag: "1", region: r, vpc_id: v, db_password: p, cluster_name: c}, substituteFrom: [{kind: ConfigMap, name: nope, optional: true}]}}`},
	{name: "strict-unset", dir: "plain", ks: `{postBuild: {substitute: {bucket: b}}}`, fails: true},
	{name: "missing-source", dir: "plain", ks: `{postBuild: {substituteFrom: [{kind: ConfigMap, name: nope}]}}`, fails: true},
	{name: "target-namespace-prefix", dir: "kustomized", ks: `{targetNamespace: apps, namePrefix: prod-, nameSuffix: -v2, postBuild: {substituteFrom: [{kind: ConfigMap, name: cluster-vars}]}}`},
	{name: "patches-images", dir: "kustomized", ks: `{images: [{name: ghcr.io/acme/api, newTag: 1.2.3}], patches: [{target: {kind: Deployment}, patch: "- {op: add, path: /spec/replicas, value: 3}"}], postBuild: {substitute: {cluster_name: "${region}"}}}`},
	{name: "always-no-vars", dir: "kustomized", ks: `{postBuild: {substituteStrategy: Always}}`, fails: true},
}

func TestBuildMatchesFlux(t *testing.T) {
	sources := readSources(t, filepath.Join("testdata", "vars.yaml"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ks := kustomization(t, tc.ks)
			src, err := substitute.NewSources(toRuntime(sources)...)
			require.NoError(t, err)
			got, gotErr := preview(t, filepath.Join("testdata", tc.dir), ks, substitute.WithSources(src))
			want, wantErr := fluxBuild(t, filepath.Join("testdata", tc.dir), ks, sources)
			if tc.fails {
				require.Error(t, wantErr, "Flux fails")
				require.Error(t, gotErr, "preview fails as Flux does (Flux: %v)", wantErr)
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, gotErr)
			assert.Equal(t, string(want), string(got))
			testutil.Golden(t, tc.name, got)
		})
	}
}

// TestBuildWritesNothing: the generated kustomization.yaml stays in memory.
func TestBuildWritesNothing(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n"})
	before := testutil.ReadFiles(t, dir)
	_, err := preview(t, dir, kustomization(t, `{}`))
	require.NoError(t, err)
	assert.Equal(t, before, testutil.ReadFiles(t, dir))
}

func TestBuildErrorsNameTheKustomization(t *testing.T) {
	_, err := preview(t, filepath.Join("testdata", "nope"), kustomization(t, `{}`))
	require.ErrorContains(t, err, "Kustomization/flux-system/apps")
	_, err = preview(t, filepath.Join("testdata", "plain"), kustomization(t, `{postBuild: {substitute: {bucket: b}}}`))
	require.ErrorContains(t, err, "Kustomization/flux-system/apps")
	require.ErrorIs(t, err, substitute.ErrVarNotSet)
}

// BenchmarkBuild previews generated trees of 1,000 and 10,000 objects with
// substitution; BenchmarkFluxBuild runs Flux's path on the same input (the
// code flux build kustomization and kustomize-controller run).
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := generated(b, n)
		ks := kustomization(b, `{postBuild: {substitute: {cluster_name: prod, region: eu-west-1}}}`)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := preview(b, dir, ks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFluxBuild(b *testing.B) {
	for _, n := range []int{1000, 3000} {
		dir := generated(b, n)
		ks := kustomization(b, `{postBuild: {substitute: {cluster_name: prod, region: eu-west-1}}}`)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := fluxBuild(b, dir, ks, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// generated writes n ConfigMaps, 10 to a file, each using two variables.
func generated(tb testing.TB, n int) string {
	dir := tb.TempDir()
	files := map[string]string{}
	for f := 0; f < n/10; f++ {
		var s string
		for i := 0; i < 10; i++ {
			s += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d-%d\n  namespace: apps\ndata:\n  cluster: ${cluster_name}\n  region: ${region}\n  plain: value-%d\n", f, i, i)
		}
		files[fmt.Sprintf("dir-%02d/file-%04d.yaml", f%50, f)] = s
	}
	testutil.WriteFiles(tb, dir, files)
	return dir
}

// fluxBuild is what flux2's internal/build does for one Kustomization
// without --dry-run: Flux's generator, Flux's kustomize build,
// SubstituteVariables for every object with a client serving sources, the
// substituted object put back with ResMap.Replace, the owner labels, then
// the objects read back and commonMetadata set with fluxcd/pkg/ssa, and
// printed as the flux CLI prints them.
// Like kustomize-controller (and unlike flux build, which leaves the option
// out) it passes spec.postBuild.substituteStrategy: Always on.
func fluxBuild(tb testing.TB, dir string, ks *kustomizev1.Kustomization, sources []client.Object) ([]byte, error) {
	return fluxBuildAt(tb, dir, ".", ks, sources)
}

// fluxBuildAt is fluxBuild of the folder rel of the tree root, copied
// whole so that bases outside rel are there.
func fluxBuildAt(tb testing.TB, root, rel string, ks *kustomizev1.Kustomization, sources []client.Object) ([]byte, error) {
	abs, err := filepath.Abs(root)
	require.NoError(tb, err)
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	require.NoError(tb, err)
	u := unstructured.Unstructured{Object: data}
	// Flux's generator writes kustomization.yaml into the directory; the
	// test works on a copy.
	work := filepath.Join(tb.TempDir(), "work")
	require.NoError(tb, os.CopyFS(work, os.DirFS(abs)))
	at := filepath.Join(work, filepath.FromSlash(rel))
	action, err := fluxkustomize.NewGenerator(work, u).WriteFile(at)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fluxkustomize.CleanDirectory(at, action) }()
	m, err := fluxkustomize.Build(filesys.MakeFsOnDisk(), at)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	require.NoError(tb, corev1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sources...).Build()
	for _, res := range m.Resources() {
		if ks.Spec.PostBuild != nil {
			out, err := fluxkustomize.SubstituteVariables(tb.Context(), c, u, res, fluxkustomize.SubstituteWithStrict(true),
				fluxkustomize.SubstituteWithAlways(ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways))
			if err != nil {
				return nil, err
			}
			if out != nil {
				if _, err := m.Replace(res); err != nil {
					return nil, err
				}
			}
		}
		labels := res.GetLabels()
		labels["kustomize.toolkit.fluxcd.io/name"] = ks.Name
		labels["kustomize.toolkit.fluxcd.io/namespace"] = ks.Namespace
		if err := res.SetLabels(labels); err != nil {
			return nil, err
		}
	}
	y, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	objects, err := ssautil.ReadObjects(bytes.NewReader(y))
	if err != nil {
		return nil, err
	}
	if md := ks.Spec.CommonMetadata; md != nil {
		ssautil.SetCommonMetadata(objects, md.Labels, md.Annotations)
	}
	out, err := ssautil.ObjectsToYAML(objects)
	return []byte(out), err
}

func kustomization(tb testing.TB, spec string) *kustomizev1.Kustomization {
	ks := &kustomizev1.Kustomization{}
	require.NoError(tb, sigyaml.Unmarshal([]byte(`{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, namespace: flux-system}, spec: `+spec+`}`), ks))
	return ks
}

func readSources(t *testing.T, path string) []client.Object {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var objs []client.Object
	for _, doc := range splitDocs(b) {
		var tm struct{ Kind string }
		require.NoError(t, sigyaml.Unmarshal(doc, &tm))
		switch tm.Kind {
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			require.NoError(t, sigyaml.Unmarshal(doc, cm))
			objs = append(objs, cm)
		case "Secret":
			s := &corev1.Secret{}
			require.NoError(t, sigyaml.Unmarshal(doc, s))
			// The API server folds stringData into data.
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
			objs = append(objs, s)
		}
	}
	return objs
}

func toRuntime(objs []client.Object) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func splitDocs(b []byte) [][]byte { return bytes.Split(b, []byte("\n---\n")) }
