package charts_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sigyaml "sigs.k8s.io/yaml"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxbuild"
)

// env is a charts.Env of a few objects, by Kind/namespace/name.
type env map[string]*fluxbuild.Object

func (e env) Object(kind, ns, name string) *fluxbuild.Object { return e[kind+"/"+ns+"/"+name] }
func (e env) Values(string, string, string) runtime.Object   { return nil }
func (e env) SourceDir(kind, ns, name string) string {
	if o := e[kind+"/"+ns+"/"+name]; o != nil {
		return o.File
	}
	return ""
}

func object(t *testing.T, kind, ns, name, doc string) *fluxbuild.Object {
	t.Helper()
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(doc), &n))
	return &fluxbuild.Object{Kind: kind, Namespace: ns, Name: name, Node: n.Content[0]}
}

// fetcher records what it was asked and serves path, or fails with err.
type fetcher struct {
	path  string
	err   error
	asked []string
}

func (f *fetcher) FetchChart(_ context.Context, url, tag string) (string, error) {
	f.asked = append(f.asked, url+":"+tag)
	return f.path, f.err
}

func release(kind, name, chart, version string) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{}
	hr.Namespace, hr.Name = "apps", "r"
	hr.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: chart, Version: version,
		SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: kind, Name: name, Namespace: "flux-system"}}}
	return hr
}

func TestPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "podinfo"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "podinfo", "Chart.yaml"), []byte("name: podinfo\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "redis-1.2.3.tgz"), nil, 0o644))
	e := env{
		"HelmRepository/flux-system/oci":  object(t, "HelmRepository", "flux-system", "oci", "spec: {type: oci, url: oci://ghcr.io/charts}"),
		"HelmRepository/flux-system/http": object(t, "HelmRepository", "flux-system", "http", "spec: {url: https://charts.example.com}"),
		"GitRepository/flux-system/repo":  {Kind: "GitRepository", Namespace: "flux-system", Name: "repo", File: "/src/repo"},
	}
	withDirs, err := charts.New(charts.WithDirs(dir))
	require.NoError(t, err)
	none, err := charts.New()
	require.NoError(t, err)

	t.Run("a chart folder by name", func(t *testing.T) {
		p, err := withDirs.Path(t.Context(), release("HelmRepository", "http", "podinfo", "6.0.0"), e)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, "podinfo"), p)
	})
	t.Run("a packaged chart by name and version", func(t *testing.T) {
		p, err := withDirs.Path(t.Context(), release("HelmRepository", "http", "redis", "1.2.3"), e)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, "redis-1.2.3.tgz"), p)
	})
	t.Run("a path in a source a layer reads", func(t *testing.T) {
		p, err := none.Path(t.Context(), release("GitRepository", "repo", "./charts/app", ""), e)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join("/src/repo", "charts", "app"), p)
	})
	t.Run("no folder and no fetcher: unavailable, not a failure", func(t *testing.T) {
		_, err := none.Path(t.Context(), release("HelmRepository", "http", "podinfo", "6.0.0"), e)
		require.ErrorIs(t, err, charts.ErrUnavailable)
		_, err = none.Path(t.Context(), release("GitRepository", "elsewhere", "./charts/app", ""), e)
		require.ErrorIs(t, err, charts.ErrUnavailable)
	})
	t.Run("an OCI HelmRepository's chart is fetched by its version's tag", func(t *testing.T) {
		f := &fetcher{path: "/cache/podinfo.tgz"}
		fetching, err := charts.New(charts.WithFetcher(f))
		require.NoError(t, err)
		p, err := fetching.Path(t.Context(), release("HelmRepository", "oci", "podinfo", "6.0.0+build.1"), e)
		require.NoError(t, err)
		assert.Equal(t, "/cache/podinfo.tgz", p)
		assert.Equal(t, []string{"oci://ghcr.io/charts/podinfo:6.0.0_build.1"}, f.asked, "Helm pushes + as _")
		// A range is resolved by Flux against the registry's tags: not fetched.
		_, err = fetching.Path(t.Context(), release("HelmRepository", "oci", "podinfo", "6.x"), e)
		require.ErrorIs(t, err, charts.ErrUnavailable)
		assert.Len(t, f.asked, 1)
		// An HTTP repository needs a Resolver.
		_, err = fetching.Path(t.Context(), release("HelmRepository", "http", "podinfo", "6.0.0"), e)
		require.ErrorIs(t, err, charts.ErrUnavailable)
	})
	t.Run("a fetch that fails is unavailable, with the reason", func(t *testing.T) {
		boom := errors.New("boom")
		fetching, err := charts.New(charts.WithFetcher(&fetcher{err: boom}))
		require.NoError(t, err)
		_, err = fetching.Path(t.Context(), release("HelmRepository", "oci", "podinfo", "6.0.0"), e)
		require.ErrorIs(t, err, charts.ErrUnavailable)
		require.ErrorIs(t, err, boom)
	})
}

func TestOptionsValidate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for name, opt := range map[string]charts.Option{
		"a missing folder": charts.WithDirs(filepath.Join(t.TempDir(), "missing")),
		"a file":           charts.WithDirs(file),
		"a nil fetcher":    charts.WithFetcher(nil),
		"a nil option":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := charts.New(opt)
			require.ErrorIs(t, err, charts.ErrInvalidOption)
		})
	}
}

// NodePath, which reads the HelmRelease's node, finds what Path finds in
// the decoded HelmRelease, chart or error, for every shape of TestPath.
func TestNodePathIsPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "podinfo"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "podinfo", "Chart.yaml"), []byte("name: podinfo\n"), 0o644))
	e := env{
		"HelmRepository/flux-system/oci":  object(t, "HelmRepository", "flux-system", "oci", "spec: {type: oci, url: oci://ghcr.io/charts}"),
		"HelmRepository/flux-system/http": object(t, "HelmRepository", "flux-system", "http", "spec: {url: https://charts.example.com}"),
		"OCIRepository/apps/podinfo":      object(t, "OCIRepository", "apps", "podinfo", "spec: {url: oci://ghcr.io/stefanprodan/charts/podinfo, ref: {tag: 6.7.0}}"),
		"GitRepository/flux-system/repo":  {Kind: "GitRepository", Namespace: "flux-system", Name: "repo", File: "/src/repo"},
	}
	withRef := func(kind, ns, name string) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{}
		hr.Namespace, hr.Name = "apps", "r"
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: kind, Namespace: ns, Name: name}
		return hr
	}
	releases := []*helmv2.HelmRelease{
		release("HelmRepository", "http", "podinfo", "6.0.0"),
		release("HelmRepository", "oci", "podinfo", "6.0.0"),
		release("HelmRepository", "oci", "podinfo", "6.x"),
		release("GitRepository", "repo", "./charts/app", ""),
		release("GitRepository", "elsewhere", "./charts/app", ""),
		withRef("OCIRepository", "", "podinfo"),
		withRef("OCIRepository", "apps", "missing"),
		{},
	}
	for _, opts := range [][]charts.Option{nil, {charts.WithDirs(dir)}, {charts.WithFetcher(&fetcher{path: "/cache/c.tgz"})}} {
		f, err := charts.New(opts...)
		require.NoError(t, err)
		for i, hr := range releases {
			data, err := sigyaml.Marshal(hr)
			require.NoError(t, err)
			var n yaml.Node
			require.NoError(t, yaml.Unmarshal(data, &n))
			o := &fluxbuild.Object{Kind: "HelmRelease", Node: n.Content[0]}
			want, wantErr := f.Path(t.Context(), hr, e)
			got, gotErr := f.NodePath(t.Context(), o, hr.Namespace, e)
			assert.Equal(t, want, got, "release %d", i)
			assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "release %d", i)
		}
	}
}
