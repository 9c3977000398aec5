package lint

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// WithCharts names folders holding charts that HelmReleases install, as
// lint cannot download them: a chart folder <name>/ (with its Chart.yaml)
// or a packaged <name>-<version>.tgz, found by the chart's name (the
// HelmRelease's spec.chart.spec.chart, or the last element of the URL of
// the OCIRepository its spec.chartRef names). A chart in a source that lint
// reads (a GitRepository's path) needs no folder.
func WithCharts(dirs ...string) Option {
	return funcLint(func(c *config) error {
		for _, d := range dirs {
			fi, err := os.Stat(d)
			if err != nil {
				return errdefs.Kind(ErrInvalidOption, "charts folder %s: %v", d, err)
			}
			if !fi.IsDir() {
				return errdefs.Kind(ErrInvalidOption, "charts folder %s: not a directory", d)
			}
		}
		c.charts = append(c.charts, dirs...)
		return nil
	})
}

// ChartFetcher fetches a chart from an OCI registry, for lint to render a
// chart in none of the WithCharts folders. url is the chart's oci://host/repo
// (without tag), tag its version as the registry tags it; path is a local
// packaged chart (.tgz). Package oci's ChartFetcher is one; layering itself
// never reaches the network.
type ChartFetcher interface {
	FetchChart(ctx context.Context, url, tag string) (path string, err error)
}

// WithChartFetcher lets lint fetch with f the OCI charts that are in none
// of the WithCharts folders: the chart of an OCIRepository that a
// HelmRelease's spec.chartRef names (spec.url at spec.ref.tag), and a chart
// of a HelmRepository of spec.type oci (spec.url/CHART at the version). A
// chart f cannot fetch is unavailable, as offline: no finding by itself,
// and the table of known operators applies. Without it, lint fetches no
// chart.
func WithChartFetcher(f ChartFetcher) Option {
	return funcLint(func(c *config) error {
		if f == nil {
			return errdefs.Kind(ErrInvalidOption, "chart fetcher: nil")
		}
		c.fetcher = f
		return nil
	})
}

// WithOperators adds to the table of well-known operators (KnownOperators)
// that lint falls back on when a HelmRelease's chart cannot be had: chart
// name → what the chart's admission webhooks intercept, each an API group
// (every resource of it) or GROUP/RESOURCE (one plural resource). The
// groups named are also taken as those whose CRDs the chart installs.
func WithOperators(charts map[string][]string) Option {
	return funcLint(func(c *config) error {
		if c.operators == nil {
			c.operators = map[string][]string{}
		}
		for chart, groups := range charts {
			if chart == "" || len(groups) == 0 || slices.Contains(groups, "") {
				return errdefs.Kind(ErrInvalidOption, "operator %q: a chart name and at least one API group are required", chart)
			}
			for _, g := range groups {
				if group, res, ok := strings.Cut(g, "/"); ok && (group == "" || res == "" || strings.Contains(res, "/")) {
					return errdefs.Kind(ErrInvalidOption, "operator %q: %q: want GROUP or GROUP/RESOURCE", chart, g)
				}
			}
			c.operators[chart] = groups
		}
		return nil
	})
}

// KnownOperators is the table lint falls back on when a HelmRelease's chart
// cannot be had: the charts of widely used operators, by the chart's name,
// and what their admission webhooks intercept (from the charts' own webhook
// configurations, failurePolicy Fail): an API group, every resource of it,
// or GROUP/RESOURCE. A finding that relies on it says so ("assumed").
// Charts whose current releases serve no admission webhook for their
// custom resources (karpenter since v1, strimzi), or whose webhooks ignore
// a failure to call them by default (kube-prometheus-stack's, for
// prometheusrules and alertmanagerconfigs only), are not in it: a webhook
// with failurePolicy Ignore cannot race.
// WithOperators extends it.
func KnownOperators() map[string][]string {
	return map[string][]string{
		"external-secrets":       {"external-secrets.io/externalsecrets", "external-secrets.io/secretstores", "external-secrets.io/clustersecretstores"},
		"cert-manager":           {"cert-manager.io", "acme.cert-manager.io"},
		"kyverno":                {"kyverno.io"},
		"crossplane":             {"apiextensions.crossplane.io", "pkg.crossplane.io"},
		"opentelemetry-operator": {"opentelemetry.io"},
		"istiod":                 {"networking.istio.io", "security.istio.io", "telemetry.istio.io"},
		"gatekeeper":             {"constraints.gatekeeper.sh", "templates.gatekeeper.sh", "mutations.gatekeeper.sh"},
		"cloudnative-pg":         {"postgresql.cnpg.io"},
	}
}

// errChartUnavailable: lint cannot get the chart offline; what is inside
// it is unknown, which is no finding by itself.
var errChartUnavailable = errors.New("chart not available offline")

// chartObjects gives every layer the objects of the charts its HelmReleases
// install (the chart's CRDs per install.crds, then the release's objects),
// rendered as helm-controller renders them (fluxbuild.RenderRelease), so
// that every rule sees CRDs, webhooks and namespaces inside charts. A
// chart that cannot be had falls back on the table of known operators.
func (l *linter) chartObjects(ctx context.Context) {
	for _, ly := range l.layers {
		var add []*object
		for _, o := range ly.objects {
			if o.helmCRDs == "" {
				continue
			}
			objs, err := l.renderChart(ctx, ly, o)
			switch {
			case errors.Is(err, errChartUnavailable):
				o.chartErr = err
				o.assumed = l.knownOperator(o)
			case err != nil:
				o.chartErr = err
				l.objFinding(RuleChart, ly, o, "%v", err)
			default:
				o.rendered = true
				add = append(add, objs...)
			}
		}
		ly.objects = append(ly.objects, add...)
	}
}

// renderChart renders the chart of the HelmRelease o of layer ly, as
// objects of the layer.
func (l *linter) renderChart(ctx context.Context, ly *lintLayer, o *object) ([]*object, error) {
	rel, chartPath, err := l.release(ctx, ly, o)
	if err != nil {
		return nil, err
	}
	var out []*object
	for _, b := range slices.Concat(rel.CRDs, rel.Objects) {
		c := *b
		c.File = l.rel(absPath(filepath.Join(chartPath, strings.TrimPrefix(filepath.FromSlash(c.File), filepath.Base(chartPath)+string(filepath.Separator)))))
		co := lintObject(&c)
		co.release = o
		out = append(out, co)
	}
	return out, nil
}

// release renders the chart of the HelmRelease o of layer ly with the
// ConfigMaps and Secrets of every layer, and says where the chart was.
func (l *linter) release(ctx context.Context, ly *lintLayer, o *object, opts ...fluxbuild.ReleaseOption) (*fluxbuild.Release, string, error) {
	var hr helmv2.HelmRelease
	if err := decodeInto(o.Node, &hr); err != nil {
		return nil, "", err
	}
	if hr.Namespace == "" {
		hr.Namespace = namespaceOr(ly.Kustomization.Spec.TargetNamespace, ly.Kustomization.Namespace)
	}
	chartPath, err := l.chartPath(ctx, &hr)
	if err != nil {
		return nil, "", err
	}
	rel, err := fluxbuild.RenderRelease(ctx, &hr, chartPath, append([]fluxbuild.ReleaseOption{fluxbuild.WithValuesFrom(l.valuesSources(&hr)...)}, opts...)...)
	return rel, chartPath, err
}

// RenderRelease renders the HelmRelease ref of a Plan as lint renders it
// (layers read from their sources, the chart found as WithCharts says, its
// valuesFrom served by the ConfigMaps and Secrets of every layer), for a
// preview of what helm-controller would install.
func RenderRelease(ctx context.Context, p *layering.Plan, inputs []Input, root string, ref layering.ObjectRef, lintOpts []Option, opts ...fluxbuild.ReleaseOption) (*fluxbuild.Release, error) {
	l, err := loadForReleases(ctx, p, inputs, root, lintOpts)
	if err != nil {
		return nil, err
	}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.helmCRDs != "" && o.Kind == ref.Kind && o.Name == ref.Name && namespaceOr(o.Namespace, ly.Kustomization.Spec.TargetNamespace) == namespaceOr(ref.Namespace, p.Namespace) {
				rel, _, err := l.release(ctx, ly, o, opts...)
				return rel, err
			}
		}
	}
	return nil, fmt.Errorf("rendering %s: no layer applies it", ref)
}

// loadForReleases loads a Plan's layers as lint does, to render their
// HelmReleases.
func loadForReleases(ctx context.Context, p *layering.Plan, inputs []Input, root string, lintOpts []Option) (*linter, error) {
	if len(inputs) != len(p.Layers) {
		return nil, errdefs.Kind(ErrInvalidOption, "plan %q: %d inputs for %d layers", p.Name, len(inputs), len(p.Layers))
	}
	cfg, err := newConfig(lintOpts)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	l := &linter{p: p, inputs: inputs, root: abs, cfg: cfg}
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// RenderedRelease is one HelmRelease of a Plan as Releases renders it.
type RenderedRelease struct {
	// Layer is the layer whose Kustomization applies the HelmRelease.
	Layer string
	// Ref is the HelmRelease: Kind HelmRelease, its namespace and name.
	Ref layering.ObjectRef
	// Release is what helm-controller would install, or nil with Err.
	Release *fluxbuild.Release
	// Err says why the release was not rendered; errors.Is
	// ErrChartUnavailable when its chart cannot be had offline.
	Err error
}

// ErrChartUnavailable is wrapped by a RenderedRelease's Err when its
// chart is in no source lint reads, no WithCharts folder, and cannot be
// fetched.
var ErrChartUnavailable = errChartUnavailable

// Releases renders, as RenderRelease does, every HelmRelease that the
// layers for which want returns true apply (every layer when want is nil),
// in the order of the Plan. A release that does not render is returned
// with its Err, not as an error: the error is for bad input and a
// cancelled ctx.
func Releases(ctx context.Context, p *layering.Plan, inputs []Input, root string, want func(layer string) bool, lintOpts []Option, opts ...fluxbuild.ReleaseOption) ([]RenderedRelease, error) {
	l, err := loadForReleases(ctx, p, inputs, root, lintOpts)
	if err != nil {
		return nil, err
	}
	var out []RenderedRelease
	for _, ly := range l.layers {
		if want != nil && !want(ly.Name) {
			continue
		}
		for _, o := range ly.objects {
			if o.helmCRDs == "" {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			rr := RenderedRelease{Layer: ly.Name, Ref: layering.ObjectRef{Kind: o.Kind, Namespace: namespaceOr(o.Namespace, namespaceOr(ly.Kustomization.Spec.TargetNamespace, p.Namespace)), Name: o.Name}}
			rr.Release, _, rr.Err = l.release(ctx, ly, o, opts...)
			out = append(out, rr)
		}
	}
	return out, nil
}

// chartPath finds the chart of hr: in a source a layer reads (a
// GitRepository's or Bucket's path), by name in the WithCharts folders, or
// fetched from its OCI registry with the WithChartFetcher fetcher.
func (l *linter) chartPath(ctx context.Context, hr *helmv2.HelmRelease) (string, error) {
	name, version := "", ""
	switch {
	case hr.Spec.ChartRef != nil:
		ref := hr.Spec.ChartRef
		src := l.findObject(ref.Kind, namespaceOr(ref.Namespace, hr.Namespace), ref.Name)
		if src == nil {
			return "", fmt.Errorf("%w: spec.chartRef %s/%s/%s: no layer creates it", errChartUnavailable, ref.Kind, namespaceOr(ref.Namespace, hr.Namespace), ref.Name)
		}
		switch ref.Kind {
		case sourcev1.OCIRepositoryKind:
			u := yamlutil.Str(src.Node, "spec", "url")
			name = path.Base(u)
			version = yamlutil.Str(src.Node, "spec", "ref", "tag")
			p, err := l.cachedChart(name, version)
			if err == nil {
				return p, nil
			}
			if res, ok := l.cfg.fetcher.(ChartResolver); ok {
				v := yamlutil.Str(src.Node, "spec", "ref", "digest") // a version of its own for the resolver
				if v == "" {
					v = yamlutil.Str(src.Node, "spec", "ref", "semver")
				}
				if v == "" {
					v = ociRepositoryTag(src)
				}
				return l.resolveChart(ctx, res, u, "", v, err)
			}
			return l.fetchChart(ctx, u, ociRepositoryTag(src), err)
		case sourcev1.HelmChartKind:
			return l.chartFromTemplate(ctx, yamlutil.Str(src.Node, "spec", "chart"), yamlutil.Str(src.Node, "spec", "version"),
				yamlutil.Str(src.Node, "spec", "sourceRef", "kind"), src.Namespace, yamlutil.Str(src.Node, "spec", "sourceRef", "name"))
		}
	case hr.Spec.Chart != nil:
		s := hr.Spec.Chart.Spec
		return l.chartFromTemplate(ctx, s.Chart, s.Version, s.SourceRef.Kind, namespaceOr(s.SourceRef.Namespace, hr.Namespace), s.SourceRef.Name)
	default:
		return "", errors.New("neither spec.chart nor spec.chartRef is set")
	}
	return l.cachedChart(name, version)
}

// chartFromTemplate finds the chart of a chart template (a HelmRelease's
// spec.chart or a HelmChart): a path in a Git or Bucket source that a
// layer reads, or a chart of a HelmRepository by name, fetched from the
// registry of an OCI HelmRepository when no charts folder holds it.
func (l *linter) chartFromTemplate(ctx context.Context, chart, version, kind, ns, name string) (string, error) {
	if kind == sourcev1.GitRepositoryKind || kind == sourcev1.BucketKind {
		for _, other := range l.layers {
			ref := other.Kustomization.Spec.SourceRef
			if other.Source != nil && ref.Kind == kind && ref.Name == name && namespaceOr(ref.Namespace, other.Kustomization.Namespace) == ns {
				return filepath.Join(other.Source.Dir, filepath.FromSlash(chart)), nil
			}
		}
		return "", fmt.Errorf("%w: chart %s of %s/%s/%s: that source is not read offline", errChartUnavailable, chart, kind, ns, name)
	}
	p, err := l.cachedChart(chart, version)
	if err == nil || kind != sourcev1.HelmRepositoryKind {
		return p, err
	}
	repo := l.findObject(kind, ns, name)
	if repo == nil {
		return "", err
	}
	if res, ok := l.cfg.fetcher.(ChartResolver); ok {
		return l.resolveChart(ctx, res, yamlutil.Str(repo.Node, "spec", "url"), chart, version, err)
	}
	if yamlutil.Str(repo.Node, "spec", "type") != sourcev1.HelmRepositoryTypeOCI {
		return "", err
	}
	u := strings.TrimSuffix(yamlutil.Str(repo.Node, "spec", "url"), "/") + "/" + chart
	return l.fetchChart(ctx, u, chartTag(version), err)
}

// ChartResolver is what a WithChartFetcher fetcher also implements when it
// reads HTTP Helm repositories and resolves version ranges as
// source-controller does (package sources' Fetcher, --sources online):
// the chart of a HelmRepository at repoURL (http(s):// or oci://) at an
// exact version, a range, or "" for the latest stable; for an
// OCIRepository's chart, repoURL is its URL and chart is "". An error
// with a method NotFound() bool returning true says the repository has
// no such chart or version: a `chart` finding, as helm-controller fails
// the same way.
type ChartResolver interface {
	ResolveChart(ctx context.Context, repoURL, chart, version string) (path string, err error)
}

// resolveChart fetches a chart with the resolver, as the charts folders do
// not hold it (notFound says so).
func (l *linter) resolveChart(ctx context.Context, res ChartResolver, repoURL, chart, version string, notFound error) (string, error) {
	if !errors.Is(notFound, errChartUnavailable) || repoURL == "" {
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
	return "", fmt.Errorf("%w, and fetching it failed: %w", errChartUnavailable, err)
}

// fetchChart fetches the chart at url (oci://host/repo) and tag with the
// WithChartFetcher fetcher, as the charts folders do not hold it (notFound
// says so); without a fetcher, or for a chart it cannot fetch, notFound
// stands, with the reason.
func (l *linter) fetchChart(ctx context.Context, url, tag string, notFound error) (string, error) {
	if l.cfg.fetcher == nil || !errors.Is(notFound, errChartUnavailable) || !strings.HasPrefix(url, ociScheme) {
		return "", notFound
	}
	if tag == "" {
		return "", fmt.Errorf("%w: chart %s: no tag to fetch (a semver range or digest is resolved by Flux, not lint)", errChartUnavailable, url)
	}
	p, err := l.cfg.fetcher.FetchChart(ctx, url, tag)
	if err != nil {
		return "", fmt.Errorf("%w, and fetching it failed: %w", errChartUnavailable, err)
	}
	return p, nil
}

// ociScheme prefixes the URL of an OCIRepository, and of a HelmRepository
// of spec.type oci.
const ociScheme = "oci://"

// ociRepositoryTag is the tag of the OCIRepository src that lint can
// fetch: spec.ref.tag, or latest when spec.ref names nothing; "" when
// spec.ref.digest or spec.ref.semver, which take precedence, is set.
func ociRepositoryTag(src *object) string {
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

// cachedChart finds a chart by name in the WithCharts folders.
func (l *linter) cachedChart(name, version string) (string, error) {
	if len(l.cfg.charts) == 0 {
		// The chart coverage's advice says how to give lint the charts.
		return "", fmt.Errorf("%w: chart %s: no chart folder to look in", errChartUnavailable, name)
	}
	for _, dir := range l.cfg.charts {
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
	return "", fmt.Errorf("%w: chart %s is in none of the charts folders %s", errChartUnavailable, name, strings.Join(l.cfg.charts, ", "))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// findObject returns the object of any layer with that kind, namespace and
// name, or nil.
func (l *linter) findObject(kind, ns, name string) *object {
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if o.Kind == kind && o.Name == name && namespaceOr(o.Namespace, ly.Kustomization.Spec.TargetNamespace) == ns {
				return o
			}
		}
	}
	return nil
}

// valuesSources are the ConfigMaps and Secrets of every layer that hr's
// valuesFrom names, decoded.
func (l *linter) valuesSources(hr *helmv2.HelmRelease) []runtime.Object {
	var out []runtime.Object
	for _, ref := range hr.Spec.ValuesFrom {
		o := l.findObject(ref.Kind, hr.Namespace, ref.Name)
		if o == nil || !o.secretOrConfigMap() {
			continue
		}
		if obj, err := o.decodeValues(); err == nil {
			obj.SetNamespace(hr.Namespace)
			out = append(out, obj)
		}
	}
	return out
}

type kubeObject interface {
	runtime.Object
	metav1.Object
}

// decodeValues decodes a ConfigMap or Secret as the API server stores it,
// from its values or, when lint kept its node instead, from the node.
func (o *object) decodeValues() (kubeObject, error) {
	var obj kubeObject
	if o.Kind == "Secret" {
		obj = &corev1.Secret{}
	} else {
		obj = &corev1.ConfigMap{}
	}
	if o.values == nil {
		if err := decodeInto(o.Node, obj); err != nil {
			return nil, err
		}
	} else {
		obj.SetName(o.Name)
		bin := o.values["binaryData"]
		if s, ok := obj.(*corev1.Secret); ok {
			s.StringData, bin = o.values["stringData"], o.values["data"]
		} else {
			obj.(*corev1.ConfigMap).Data = o.values["data"]
		}
		var decoded map[string][]byte
		for k, v := range bin {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", o.ref(), k, err)
			}
			if decoded == nil {
				decoded = map[string][]byte{}
			}
			decoded[k] = b
		}
		if s, ok := obj.(*corev1.Secret); ok {
			s.Data = decoded
		} else {
			obj.(*corev1.ConfigMap).BinaryData = decoded
		}
	}
	if s, ok := obj.(*corev1.Secret); ok {
		for k, v := range s.StringData {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			s.Data[k] = []byte(v) // as the API server stores stringData
		}
	}
	return obj, nil
}

// knownOperator returns what the webhooks of the chart of the HelmRelease o
// intercept (webhookKey keys), by the table of known operators, or nil.
func (l *linter) knownOperator(o *object) []string {
	name := yamlutil.Str(o.Node, "spec", "chart", "spec", "chart")
	if name == "" {
		if ref := yamlutil.Str(o.Node, "spec", "chartRef", "name"); ref != "" {
			ns := namespaceOr(yamlutil.Str(o.Node, "spec", "chartRef", "namespace"), o.Namespace)
			if src := l.findObject(yamlutil.Str(o.Node, "spec", "chartRef", "kind"), ns, ref); src != nil {
				if u := yamlutil.Str(src.Node, "spec", "url"); u != "" {
					name = path.Base(u)
				} else {
					name = yamlutil.Str(src.Node, "spec", "chart")
				}
			}
		}
	}
	name = path.Base(name)
	entries, ok := l.cfg.operators[name]
	if !ok {
		entries = KnownOperators()[name]
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		group, res, ok := strings.Cut(e, "/")
		if !ok {
			res = "*"
		}
		keys[i] = webhookKey(group, res)
	}
	return keys
}

// decodeInto decodes a YAML node into a Kubernetes object.
func decodeInto(n *yaml.Node, into any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	return sigyaml.Unmarshal(b, into)
}

func namespaceOr(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}
