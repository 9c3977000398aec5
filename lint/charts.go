package lint

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// WithCharts names folders holding charts that HelmReleases install, as
// lint cannot download them (charts.WithDirs). A chart in a source that
// lint reads (a GitRepository's path) needs no folder.
func WithCharts(dirs ...string) Option {
	return funcLint(func(c *config) error {
		if _, err := charts.New(charts.WithDirs(dirs...)); err != nil {
			return err
		}
		c.charts = append(c.charts, charts.WithDirs(dirs...))
		return nil
	})
}

// WithChartFetcher lets lint fetch with f the charts that are in none of
// the WithCharts folders (charts.WithFetcher). A chart f cannot fetch is
// unavailable, as offline: no finding by itself, and the table of known
// operators applies. Without it, lint fetches no chart.
func WithChartFetcher(f charts.Fetcher) Option {
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
			case errors.Is(err, charts.ErrUnavailable):
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
	// The chart first, from the node: most charts cannot be had offline,
	// and decoding a HelmRelease costs more than finding that out.
	env := lintEnv{l}
	chartPath, err := l.cfg.finder.NodePath(ctx, o.Object, charts.ReleaseNamespace(o.Object, ly.Layer), env)
	if err != nil {
		return nil, "", err
	}
	hr, err := charts.Decode(o.Object, ly.Layer)
	if err != nil {
		return nil, "", err
	}
	rel, err := charts.RenderAt(ctx, hr, chartPath, env, opts...)
	return rel, chartPath, err
}

// loadForReleases loads a Plan's layers as lint does, to render their
// HelmReleases.
func loadForReleases(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, root string, lintOpts []Option) (*linter, error) {
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

// Releases renders, as lint does (charts.Releases with the objects as lint
// loaded them), every HelmRelease that the
// layers for which want returns true apply (every layer when want is nil),
// in the order of the Plan. A release that does not render is returned
// with its Err, not as an error: the error is for bad input and a
// cancelled ctx.
func Releases(ctx context.Context, p *layering.Plan, inputs []fluxbuild.Input, root string, want func(layer string) bool, lintOpts []Option, opts ...fluxbuild.ReleaseOption) ([]charts.Rendered, error) {
	l, err := loadForReleases(ctx, p, inputs, root, lintOpts)
	if err != nil {
		return nil, err
	}
	var out []charts.Rendered
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
			rr := charts.Rendered{Layer: ly.Name, Ref: layering.ObjectRef{Kind: o.Kind, Namespace: namespaceOr(o.Namespace, namespaceOr(ly.Kustomization.Spec.TargetNamespace, p.Namespace)), Name: o.Name}}
			rr.Release, _, rr.Err = l.release(ctx, ly, o, opts...)
			out = append(out, rr)
		}
	}
	return out, nil
}

// lintEnv is the charts.Env of the layers as lint loaded them: the
// values of ConfigMaps and Secrets whose nodes lint let go of are in
// their values.
type lintEnv struct{ l *linter }

func (e lintEnv) Object(kind, ns, name string) *fluxbuild.Object {
	if o := e.l.findObject(kind, ns, name); o != nil {
		return o.Object
	}
	return nil
}

func (e lintEnv) Values(kind, ns, name string) runtime.Object {
	o := e.l.findObject(kind, ns, name)
	if o == nil || !o.secretOrConfigMap() {
		return nil
	}
	obj, err := o.decodeValues()
	if err != nil {
		return nil
	}
	return obj
}

func (e lintEnv) SourceDir(kind, ns, name string) string {
	for _, other := range e.l.layers {
		ref := other.Kustomization.Spec.SourceRef
		if other.Source != nil && ref.Kind == kind && ref.Name == name && namespaceOr(ref.Namespace, other.Kustomization.Namespace) == ns {
			return other.Source.Dir
		}
	}
	return ""
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
	name := l.chartName(o)
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

// chartName is the name of the chart the HelmRelease o installs: its
// spec.chart's, or its chartRef source's (an OCIRepository's URL's last
// element, a HelmChart's chart); "" when it is not known.
func (l *linter) chartName(o *object) string {
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
	if name == "" {
		return ""
	}
	return path.Base(name)
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
