package charts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Env is where a HelmRelease's chart source and values are found: the
// objects and sources of the platform that applies it.
type Env interface {
	// Object is the object the platform applies with that kind,
	// namespace and name (a chart's HelmRepository, OCIRepository or
	// HelmChart), or nil.
	Object(kind, namespace, name string) *fluxbuild.Object
	// Values is the ConfigMap or Secret of that kind, namespace and name
	// decoded as the API server stores it, or nil when there is none.
	Values(kind, namespace, name string) runtime.Object
	// SourceDir is the folder where a layer reads the GitRepository or
	// Bucket of that kind, namespace and name, or "" when none does.
	SourceDir(kind, namespace, name string) string
}

// Render renders what helm-controller installs for hr: its chart found
// as Path finds it, its valuesFrom served by env's ConfigMaps and Secrets.
// It returns where the chart was too.
func (f *Finder) Render(ctx context.Context, hr *helmv2.HelmRelease, env Env, opts ...fluxbuild.ReleaseOption) (*fluxbuild.Release, string, error) {
	chartPath, err := f.Path(ctx, hr, env)
	if err != nil {
		return nil, "", err
	}
	rel, err := RenderAt(ctx, hr, chartPath, env, opts...)
	return rel, chartPath, err
}

// RenderAt renders what helm-controller installs for hr from the chart at
// chartPath, its valuesFrom served by env's ConfigMaps and Secrets.
func RenderAt(ctx context.Context, hr *helmv2.HelmRelease, chartPath string, env Env, opts ...fluxbuild.ReleaseOption) (*fluxbuild.Release, error) {
	return fluxbuild.RenderRelease(ctx, hr, chartPath, append([]fluxbuild.ReleaseOption{fluxbuild.WithValuesFrom(valuesSources(hr, env)...)}, opts...)...)
}

// valuesSources are env's ConfigMaps and Secrets that hr's valuesFrom
// names, in hr's namespace.
func valuesSources(hr *helmv2.HelmRelease, env Env) []runtime.Object {
	var out []runtime.Object
	for _, ref := range hr.Spec.ValuesFrom {
		if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
			continue
		}
		obj := env.Values(ref.Kind, hr.Namespace, ref.Name)
		if obj == nil {
			continue
		}
		if m, ok := obj.(interface{ SetNamespace(string) }); ok {
			m.SetNamespace(hr.Namespace)
		}
		out = append(out, obj)
	}
	return out
}

// Path finds the chart of hr: in a source a layer reads (a GitRepository's
// or Bucket's path), by name in the WithDirs folders, or fetched from its
// registry with the WithFetcher fetcher. A chart it cannot have is an
// error wrapping ErrUnavailable.
func (f *Finder) Path(ctx context.Context, hr *helmv2.HelmRelease, env Env) (string, error) {
	s := chartSpec{namespace: hr.Namespace}
	if r := hr.Spec.ChartRef; r != nil {
		s.ref, s.refKind, s.refNamespace, s.refName = true, r.Kind, r.Namespace, r.Name
	}
	if c := hr.Spec.Chart; c != nil {
		s.template, s.chart, s.version = true, c.Spec.Chart, c.Spec.Version
		if c.Spec.SourceRef != nil {
			s.kind, s.sourceNamespace, s.name = c.Spec.SourceRef.Kind, c.Spec.SourceRef.Namespace, c.Spec.SourceRef.Name
		}
	}
	return f.path(ctx, s, env)
}

// NodePath is Path of the HelmRelease o, in namespace (ReleaseNamespace),
// read from its node without decoding it: a chart that cannot be had costs
// no decoding.
func (f *Finder) NodePath(ctx context.Context, o *fluxbuild.Object, namespace string, env Env) (string, error) {
	spec := yamlutil.Field(o.Node, "spec")
	s := chartSpec{namespace: namespace}
	if r := yamlutil.Field(spec, "chartRef"); r != nil {
		s.ref, s.refKind, s.refNamespace, s.refName = true, yamlutil.Str(r, "kind"), yamlutil.Str(r, "namespace"), yamlutil.Str(r, "name")
	}
	if c := yamlutil.Field(spec, "chart"); c != nil {
		cs := yamlutil.Field(c, "spec")
		s.template, s.chart, s.version = true, yamlutil.Str(cs, "chart"), yamlutil.Str(cs, "version")
		s.kind, s.sourceNamespace, s.name = yamlutil.Str(cs, "sourceRef", "kind"), yamlutil.Str(cs, "sourceRef", "namespace"), yamlutil.Str(cs, "sourceRef", "name")
	}
	return f.path(ctx, s, env)
}

// chartSpec is what a HelmRelease says of where its chart is.
type chartSpec struct {
	namespace string // the release's
	// spec.chartRef
	ref                            bool
	refKind, refNamespace, refName string
	// spec.chart.spec
	template                    bool
	chart, version              string
	kind, sourceNamespace, name string
}

// path finds the chart s names (Path).
func (f *Finder) path(ctx context.Context, s chartSpec, env Env) (string, error) {
	if f == nil {
		f = &Finder{}
	}
	name, version := "", ""
	switch {
	case s.ref:
		ns := namespaceOr(s.refNamespace, s.namespace)
		src := env.Object(s.refKind, ns, s.refName)
		if src == nil {
			return "", fmt.Errorf("%w: spec.chartRef %s/%s/%s: no layer creates it", ErrUnavailable, s.refKind, ns, s.refName)
		}
		switch s.refKind {
		case sourcev1.OCIRepositoryKind:
			u := yamlutil.Str(src.Node, "spec", "url")
			name = path.Base(u)
			version = yamlutil.Str(src.Node, "spec", "ref", "tag")
			p, err := f.cached(name, version)
			if err == nil {
				return p, nil
			}
			if res, ok := f.fetcher.(Resolver); ok {
				v := yamlutil.Str(src.Node, "spec", "ref", "digest") // a version of its own for the resolver
				if v == "" {
					v = yamlutil.Str(src.Node, "spec", "ref", "semver")
				}
				if v == "" {
					v = ociRepositoryTag(src)
				}
				return resolve(ctx, res, u, "", v, err)
			}
			return f.fetch(ctx, u, ociRepositoryTag(src), err)
		case sourcev1.HelmChartKind:
			return f.fromTemplate(ctx, env, yamlutil.Str(src.Node, "spec", "chart"), yamlutil.Str(src.Node, "spec", "version"),
				yamlutil.Str(src.Node, "spec", "sourceRef", "kind"), src.Namespace, yamlutil.Str(src.Node, "spec", "sourceRef", "name"))
		}
	case s.template:
		return f.fromTemplate(ctx, env, s.chart, s.version, s.kind, namespaceOr(s.sourceNamespace, s.namespace), s.name)
	default:
		return "", errors.New("neither spec.chart nor spec.chartRef is set")
	}
	return f.cached(name, version)
}

// fromTemplate finds the chart of a chart template (a HelmRelease's
// spec.chart or a HelmChart): a path in a Git or Bucket source that a
// layer reads, or a chart of a HelmRepository by name, fetched from the
// registry of an OCI HelmRepository when no charts folder holds it.
func (f *Finder) fromTemplate(ctx context.Context, env Env, chart, version, kind, ns, name string) (string, error) {
	if kind == sourcev1.GitRepositoryKind || kind == sourcev1.BucketKind {
		if dir := env.SourceDir(kind, ns, name); dir != "" {
			return filepath.Join(dir, filepath.FromSlash(chart)), nil
		}
		return "", fmt.Errorf("%w: chart %s of %s/%s/%s: that source is not read offline", ErrUnavailable, chart, kind, ns, name)
	}
	p, err := f.cached(chart, version)
	if err == nil || kind != sourcev1.HelmRepositoryKind {
		return p, err
	}
	repo := env.Object(kind, ns, name)
	if repo == nil {
		return "", err
	}
	if res, ok := f.fetcher.(Resolver); ok {
		return resolve(ctx, res, yamlutil.Str(repo.Node, "spec", "url"), chart, version, err)
	}
	if yamlutil.Str(repo.Node, "spec", "type") != sourcev1.HelmRepositoryTypeOCI {
		return "", err
	}
	u := strings.TrimSuffix(yamlutil.Str(repo.Node, "spec", "url"), "/") + "/" + chart
	return f.fetch(ctx, u, chartTag(version), err)
}

// resolve fetches a chart with the resolver, as the charts folders do not
// hold it (notFound says so).
func resolve(ctx context.Context, res Resolver, repoURL, chart, version string, notFound error) (string, error) {
	if !errors.Is(notFound, ErrUnavailable) || repoURL == "" {
		return "", notFound
	}
	p, err := res.ResolveChart(ctx, repoURL, chart, version)
	if err == nil {
		return p, nil
	}
	var nf interface{ NotFound() bool }
	if errors.As(err, &nf) && nf.NotFound() {
		return "", err // the repository's answer: helm-controller fails too
	}
	return "", fmt.Errorf("%w, and fetching it failed: %w", ErrUnavailable, err)
}

// fetch fetches the chart at url (oci://host/repo) and tag with the
// WithFetcher fetcher, as the charts folders do not hold it (notFound
// says so); without a fetcher, or for a chart it cannot fetch, notFound
// stands, with the reason.
func (f *Finder) fetch(ctx context.Context, url, tag string, notFound error) (string, error) {
	if f.fetcher == nil || !errors.Is(notFound, ErrUnavailable) || !strings.HasPrefix(url, ociScheme) {
		return "", notFound
	}
	if tag == "" {
		return "", fmt.Errorf("%w: chart %s: no tag to fetch (a semver range or digest is resolved by Flux, not lint)", ErrUnavailable, url)
	}
	p, err := f.fetcher.FetchChart(ctx, url, tag)
	if err != nil {
		return "", fmt.Errorf("%w, and fetching it failed: %w", ErrUnavailable, err)
	}
	return p, nil
}

// ociScheme prefixes the URL of an OCIRepository, and of a HelmRepository
// of spec.type oci.
const ociScheme = "oci://"

// ociRepositoryTag is the tag of the OCIRepository src that can be
// fetched: spec.ref.tag, or latest when spec.ref names nothing; "" when
// spec.ref.digest or spec.ref.semver, which take precedence, is set.
func ociRepositoryTag(src *fluxbuild.Object) string {
	if yamlutil.Str(src.Node, "spec", "ref", "digest") != "" || yamlutil.Str(src.Node, "spec", "ref", "semver") != "" {
		return ""
	}
	if tag := yamlutil.Str(src.Node, "spec", "ref", "tag"); tag != "" {
		return tag
	}
	return "latest"
}

// chartVersion is one semantic version, as a chart's version is; anything
// else in a chart template's spec.version (empty, "*", "1.x", ">=1.2") is
// a range that source-controller resolves against the registry's tags.
var chartVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
})

// chartTag is the tag under which Helm pushes the chart version v (a "+"
// of build metadata becomes "_"), or "" when v is not one version.
func chartTag(v string) string {
	if !chartVersion().MatchString(v) {
		return ""
	}
	return strings.ReplaceAll(v, "+", "_")
}

// cached finds a chart by name in the WithDirs folders.
func (f *Finder) cached(name, version string) (string, error) {
	if len(f.dirs) == 0 {
		// The chart coverage's advice says how to give lint the charts.
		return "", fmt.Errorf("%w: chart %s: no chart folder to look in", ErrUnavailable, name)
	}
	for _, dir := range f.dirs {
		if fi, err := os.Stat(filepath.Join(dir, name, "Chart.yaml")); err == nil && !fi.IsDir() {
			return filepath.Join(dir, name), nil
		}
		if version != "" {
			if p := filepath.Join(dir, name+"-"+version+".tgz"); fileExists(p) {
				return p, nil
			}
		}
		if m, _ := filepath.Glob(filepath.Join(dir, name+"-*.tgz")); len(m) == 1 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("%w: chart %s is in none of the charts folders %s", ErrUnavailable, name, strings.Join(f.dirs, ", "))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func namespaceOr(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}
