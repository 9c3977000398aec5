package fluxrepo_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// fakeSources serves directories by source URL, or the error of a URL;
// it records what was fetched.
type fakeSources struct {
	dirs   map[string]string
	errs   map[string]error
	called []string
}

type missingRef string

func (e missingRef) Error() string  { return string(e) }
func (e missingRef) NotFound() bool { return true }

func (f *fakeSources) FetchSource(_ context.Context, src runtime.Object) (string, string, error) {
	var url, name string
	switch s := src.(type) {
	case *sourcev1.GitRepository:
		url, name = s.Spec.URL, "GitRepository/"+s.Namespace+"/"+s.Name
	case *sourcev1.OCIRepository:
		url, name = s.Spec.URL, "OCIRepository/"+s.Namespace+"/"+s.Name
	}
	f.called = append(f.called, name)
	if err := f.errs[url]; err != nil {
		return "", "", fmt.Errorf("fetching %s: %w", name, err)
	}
	return f.dirs[url], "main@sha1:0123", nil
}

func gitSource(name, url, extra string) string {
	return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 10m\n  url: " + url + "\n  ref: {branch: main}\n" + extra
}

func fromSource(name, path, kind, source string) string {
	return strings.Replace(ks(name, path, ""), "kind: GitRepository\n    name: flux-system", "kind: "+kind+"\n    name: "+source, 1)
}

// With a SourceFetcher, a layer whose source is another repository is read
// from what the fetcher gives; a GitRepository's spec.include is laid out
// into it; a ref the source lacks is a `source` finding; an unreachable
// source stays Coverage.
func TestReadFetchesSources(t *testing.T) {
	platform := write(t, map[string]string{
		"infra/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n",
	})
	shared := write(t, map[string]string{
		"deploy/config/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: web}\n",
	})
	ociDir := write(t, map[string]string{
		"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: web}\n",
	})
	root := write(t, map[string]string{
		"clusters/c/sources.yaml": gitSource("platform", "https://git.example.com/platform", "  include:\n    - repository: {name: shared}\n      fromPath: deploy\n      toPath: infra/shared\n") +
			"---\n" + gitSource("shared", "https://git.example.com/shared", "") +
			"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: apps, namespace: flux-system}\nspec: {interval: 10m, url: oci://registry.example.com/apps, ref: {tag: v1}}\n",
		"clusters/c/infra.yaml": fromSource("infra", "./infra", "GitRepository", "platform"),
		"clusters/c/apps.yaml":  fromSource("apps", "./apps", "OCIRepository", "apps") + "  dependsOn: [{name: infra}]\n",
	})
	entry := filepath.Join(root, "clusters/c")

	offline, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.NoError(t, err)
	require.Len(t, offline.Coverage, 1, "offline: %+v", offline.Coverage)
	assert.Equal(t, lint.CoverageSource, offline.Coverage[0].Cause)

	f := &fakeSources{dirs: map[string]string{
		"https://git.example.com/platform": platform, "https://git.example.com/shared": shared, "oci://registry.example.com/apps": ociDir,
	}}
	repo, err := fluxrepo.Read(t.Context(), entry, fluxrepo.WithRoot(root), fluxrepo.WithSourceFetcher(f))
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	objects := map[string][]string{}
	for i, in := range repo.Inputs {
		assert.Empty(t, in.Unavailable, "layer %s", repo.Plan.Layers[i].Name)
		for _, o := range in.Objects {
			objects[repo.Plan.Layers[i].Name] = append(objects[repo.Plan.Layers[i].Name], o.Kind+"/"+o.Name)
		}
	}
	assert.ElementsMatch(t, []string{"Namespace/web", "ConfigMap/shared"}, objects["infra"], "the platform repository with shared's deploy/ included at infra/shared")
	assert.ElementsMatch(t, []string{"ConfigMap/web"}, objects["apps"])
	assert.ElementsMatch(t, []string{"GitRepository/flux-system/platform", "GitRepository/flux-system/shared", "OCIRepository/flux-system/apps"}, f.called, "each source fetched once")

	t.Run("an ArtifactGenerator copies from a fetched source", func(t *testing.T) {
		gen := write(t, map[string]string{
			"clusters/c/sources.yaml": gitSource("shared", "https://git.example.com/shared", "") +
				"---\napiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\nspec:\n  sources: [{alias: shared, kind: GitRepository, name: shared}]\n  artifacts:\n    - name: config\n      copy: [{from: \"@shared/deploy/**\", to: \"@artifact/\"}]\n",
			"clusters/c/config.yaml": fromSource("config", "./config", "ExternalArtifact", "config"),
		})
		f := &fakeSources{dirs: f.dirs}
		repo, err := fluxrepo.Read(t.Context(), filepath.Join(gen, "clusters/c"), fluxrepo.WithRoot(gen), fluxrepo.WithSourceFetcher(f))
		require.NoError(t, err)
		defer repo.Close()
		var got []string
		for i, l := range repo.Plan.Layers {
			if l.Name == "config" {
				assert.Empty(t, repo.Inputs[i].Unavailable)
				for _, o := range repo.Inputs[i].Objects {
					got = append(got, o.Kind+"/"+o.Name)
				}
			}
		}
		assert.Equal(t, []string{"ConfigMap/shared"}, got, "shared's deploy/config/cm.yaml at config/cm.yaml of the artifact")
	})

	t.Run("a ref the source lacks", func(t *testing.T) {
		f := &fakeSources{dirs: f.dirs, errs: map[string]error{"oci://registry.example.com/apps": missingRef(`tag "v1" not found`)}}
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithSourceFetcher(f)})
		require.NoError(t, err)
		require.Len(t, rep.Findings, 1, "%v", rep.Findings)
		assert.Equal(t, lint.RuleSource, rep.Findings[0].Rule)
		assert.Contains(t, rep.Findings[0].String(), `clusters/c/sources.yaml`)
		assert.Contains(t, rep.Findings[0].Message, `OCIRepository/flux-system/apps: fetching OCIRepository/flux-system/apps: tag "v1" not found`)
	})

	t.Run("an unreachable source", func(t *testing.T) {
		f := &fakeSources{dirs: f.dirs, errs: map[string]error{"https://git.example.com/shared": errors.New("dial tcp: connection refused")}}
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithSourceFetcher(f)})
		require.NoError(t, err)
		assert.Empty(t, rep.Findings)
		require.Len(t, rep.Coverage, 1)
		assert.ElementsMatch(t, []string{"infra", "apps"}, rep.Coverage[0].Layers, "apps depends on infra: neither is checked fully")
		assert.Contains(t, strings.Join(rep.Coverage[0].Missing, "\n"), "GitRepository/flux-system/platform includes GitRepository/flux-system/shared: GitRepository/flux-system/shared could not be fetched: fetching GitRepository/flux-system/shared: dial tcp: connection refused")
	})

	t.Run("nil fetcher", func(t *testing.T) {
		_, err := fluxrepo.Read(t.Context(), entry, fluxrepo.WithSourceFetcher(nil))
		require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
	})
}
