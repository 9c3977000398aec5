package fluxbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	helmaction "helm.sh/helm/v4/pkg/action"
	helmcommon "helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	helmloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/substitute"
)

// ErrChartNotFound is wrapped by the error about a chart that cannot be
// loaded from where it was said to be.
var ErrChartNotFound = errors.New("chart not found")

// Release is what helm-controller installs for a HelmRelease: the chart's
// CRDs it applies first, per spec.install.crds, then the release's
// manifest.
type Release struct {
	// Name and Namespace are the Helm release's (spec.releaseName, or
	// [targetNamespace-]name shortened as helm-controller shortens it, and
	// spec.targetNamespace or the HelmRelease's namespace).
	Name      string
	Namespace string
	// Chart names the chart as its Chart.yaml does: name-version.
	Chart string
	// CRDs are the objects of the chart's crds/ folders (its dependencies'
	// too) that helm-controller applies before installing: none when
	// spec.install.crds is Skip. Their File is the chart's file.
	CRDs []*Object
	// Objects are the release's objects, hooks left out, after the
	// post-renderers, in the order of the manifest. File names the
	// template that made each one (chart/templates/x.yaml), Line is 0.
	Objects []*Object
	// Manifest is the release's manifest as helm-controller stores it:
	// the YAML Objects were read from.
	Manifest []byte
}

// ReleaseOption configures RenderRelease. Only this package implements it.
type ReleaseOption interface{ applyToRelease(*releaseConfig) error }

type releaseConfig struct {
	sources     map[client.ObjectKey]map[string]client.Object // kind → key → object
	kubeVersion *helmcommon.KubeVersion
	redact      bool // WithRedactedSecrets
}

type funcRelease func(*releaseConfig) error

func (f funcRelease) applyToRelease(c *releaseConfig) error { return f(c) }

// WithValuesFrom gives the ConfigMaps and Secrets spec.valuesFrom may
// read, as the cluster would hold them. A reference to an object not given
// is a missing object, an error unless the reference is optional, as for
// helm-controller.
func WithValuesFrom(objs ...runtime.Object) ReleaseOption {
	return funcRelease(func(c *releaseConfig) error {
		for _, obj := range objs {
			o, _ := obj.(client.Object)
			kind := valuesKind(obj)
			if kind == "" {
				return errdefs.InvalidOption("WithValuesFrom: %T: want a *ConfigMap or a *Secret", obj)
			}
			key := client.ObjectKey{Namespace: kind}
			if c.sources[key] == nil {
				c.sources[key] = map[string]client.Object{}
			}
			c.sources[key][o.GetNamespace()+"/"+o.GetName()] = o
		}
		return nil
	})
}

// WithRedactedSecrets renders with every value taken from a Secret
// replaced by substitute.Redacted ("REDACTED"): each leaf of a values
// document, or the whole value of a targetPath reference. The Secret's
// values never reach the templates, so they cannot reach the output; a
// template that needs a Secret's value to be a number, say, fails.
func WithRedactedSecrets() ReleaseOption {
	return funcRelease(func(c *releaseConfig) error {
		c.redact = true
		return nil
	})
}

// WithKubeVersion sets the Kubernetes version templates see as
// .Capabilities.KubeVersion (default: Helm's own default, as `helm
// template` has it); helm-controller asks the cluster.
func WithKubeVersion(version string) ReleaseOption {
	return funcRelease(func(c *releaseConfig) error {
		v, err := helmcommon.ParseKubeVersion(version)
		if err != nil {
			return errdefs.InvalidOption("WithKubeVersion %q: %v", version, err)
		}
		c.kubeVersion = v
		return nil
	})
}

// RenderRelease renders what helm-controller installs for hr from the
// chart at chartPath (a chart folder or a packaged .tgz), without a
// cluster: the values merged as helm-controller merges them (the chart's
// defaults, then spec.valuesFrom in order, then spec.values, by
// fluxcd/pkg/chartutil, helm-controller's own code), Helm's install
// action (helm.sh/helm/v4) in client-only dry-run mode with the
// HelmRelease's release name, namespace and install options, and
// helm-controller's post-renderers: spec.postRenderers' kustomize patches
// and images, spec.commonMetadata, and the helm.toolkit.fluxcd.io
// name/namespace labels.
//
// Templates that look the cluster up (lookup) see nothing, as in `helm
// template`. Errors name the HelmRelease; a chart that cannot be loaded
// wraps ErrChartNotFound, a values reference that cannot be resolved
// chartutil's *ErrValuesReference.
func RenderRelease(ctx context.Context, hr *helmv2.HelmRelease, chartPath string, opts ...ReleaseOption) (*Release, error) {
	ref := helmv2.HelmReleaseKind + "/" + hr.Namespace + "/" + hr.Name
	cfg := &releaseConfig{sources: map[client.ObjectKey]map[string]client.Object{}}
	if err := errdefs.ApplyOptions(cfg, opts, ReleaseOption.applyToRelease, "nil ReleaseOption"); err != nil {
		return nil, err
	}
	chrt, err := helmloader.Load(chartPath)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: loading chart %s: %w: %w", ref, chartPath, ErrChartNotFound, err)
	}
	rel, err := renderRelease(ctx, hr, chrt, cfg)
	if err != nil {
		return nil, fmt.Errorf("rendering %s with chart %s: %w", ref, chartPath, err)
	}
	return rel, nil
}

func renderRelease(ctx context.Context, hr *helmv2.HelmRelease, chrt *helmchart.Chart, cfg *releaseConfig) (*Release, error) {
	policy := hr.GetInstall().CRDs
	switch policy {
	case "":
		policy = helmv2.Create
	case helmv2.Skip, helmv2.Create, helmv2.CreateReplace:
	default:
		return nil, fmt.Errorf("spec.install.crds %q: want %s, %s or %s", policy, helmv2.Skip, helmv2.Create, helmv2.CreateReplace)
	}
	vals, err := chartutil.ChartValuesFromReferences(ctx, logr.Discard(), &valuesReader{cfg: cfg}, hr.Namespace, hr.GetValues(), hr.Spec.ValuesFrom...)
	if err != nil {
		return nil, fmt.Errorf("merging values: %w", err)
	}

	actionCfg := helmaction.NewConfiguration(helmaction.ConfigurationSetLogger(slog.DiscardHandler))
	install := helmaction.NewInstall(actionCfg)
	install.DryRunStrategy = helmaction.DryRunClient
	install.ReleaseName = shortenReleaseName(hr.GetReleaseName())
	install.Namespace = hr.GetReleaseNamespace()
	install.DisableHooks = hr.GetInstall().DisableHooks
	install.DisableOpenAPIValidation = hr.GetInstall().DisableOpenAPIValidation
	install.SkipSchemaValidation = hr.GetInstall().DisableSchemaValidation
	install.Replace = true // no release storage to check names against, as `helm template`
	install.Devel = true
	install.SkipCRDs = true
	install.KubeVersion = cfg.kubeVersion
	install.PostRenderer = &postRenderer{hr: hr}
	install.PostRenderStrategy = helmaction.PostRenderStrategyCombined
	if s := hr.GetPostRenderStrategy(); s != "" {
		install.PostRenderStrategy = helmaction.PostRenderStrategy(s)
	}
	out, err := install.RunWithContext(ctx, chrt, vals.AsMap())
	if err != nil {
		return nil, err
	}
	hrel, ok := out.(*helmrelease.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a %T, not a chart API v2 release", out)
	}
	rel := &Release{Name: install.ReleaseName, Namespace: install.Namespace, Chart: chrt.Name() + "-" + chrt.Metadata.Version, Manifest: []byte(hrel.Manifest)}
	if rel.Objects, err = manifestObjects(rel.Manifest); err != nil {
		return nil, err
	}
	if policy != helmv2.Skip {
		// The install processed the chart's dependencies (conditions,
		// tags) with these values, as helm-controller does before it
		// collects the CRDs of the chart and its enabled dependencies.
		for _, crd := range chrt.CRDObjects() {
			nodes, err := readManifests(crd.Filename, crd.File.Data)
			if err != nil {
				return nil, err
			}
			for _, n := range nodes {
				o, err := newObject(n)
				if err != nil {
					return nil, &FileError{Path: crd.Filename, Line: n.Line, Err: err}
				}
				if o.Kind != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
					continue // helm-controller applies CRDs only from crds/
				}
				o.File, o.Line = crd.Filename, n.Line
				rel.CRDs = append(rel.CRDs, o)
			}
		}
	}
	return rel, nil
}

// shortenReleaseName is helm-controller's: a name longer than Helm's 53
// characters keeps its first 40, a dash and 12 hex digits of its SHA-256.
func shortenReleaseName(name string) string {
	const maxLength, hashLength = 53, 12
	if len(name) <= maxLength {
		return name
	}
	return name[:maxLength-hashLength-1] + "-" + fmt.Sprintf("%x", sha256.Sum256([]byte(name)))[:hashLength]
}

// manifestObjects reads the objects of a release manifest, each with the
// template its "# Source:" comment names.
func manifestObjects(manifest []byte) ([]*Object, error) {
	var objs []*Object
	for _, doc := range bytes.Split(manifest, []byte("\n---")) {
		src := ""
		if i := bytes.Index(doc, []byte("# Source: ")); i >= 0 {
			line, _, _ := bytes.Cut(doc[i+len("# Source: "):], []byte("\n"))
			src = string(line)
		}
		nodes, err := readManifests(src, doc)
		if err != nil {
			return nil, fmt.Errorf("reading the rendered manifest: %w", err)
		}
		for _, n := range nodes {
			o, err := newObject(n)
			if err != nil {
				return nil, &FileError{Path: src, Err: err}
			}
			o.File, o.Line, o.Built, o.Dollar = src, 0, true, true
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// valuesReader serves chartutil the ConfigMaps and Secrets WithValuesFrom
// gave; chartutil only ever gets them.
// valuesKind is the kind of a valuesFrom object, "" for a kind that
// holds no values.
func valuesKind(obj any) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	}
	return ""
}

type valuesReader struct {
	client.Client
	cfg *releaseConfig
}

func (r *valuesReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	kind := valuesKind(obj)
	if kind == "" {
		return fmt.Errorf("reading %T %s: only ConfigMaps and Secrets hold values", obj, key)
	}
	src, ok := r.cfg.sources[client.ObjectKey{Namespace: kind}][key.Namespace+"/"+key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, key.Name)
	}
	switch dst := obj.(type) {
	case *corev1.ConfigMap:
		src.(*corev1.ConfigMap).DeepCopyInto(dst)
	case *corev1.Secret:
		src.(*corev1.Secret).DeepCopyInto(dst)
		if r.cfg.redact {
			for k, v := range dst.Data {
				dst.Data[k] = redactValues(v)
			}
		}
	}
	return nil
}

// redactValues replaces every leaf of a YAML values document with
// substitute.Redacted; anything else (a scalar for a targetPath) becomes
// Redacted whole.
func redactValues(data []byte) []byte {
	var doc map[string]any
	if err := sigyaml.Unmarshal(data, &doc); err != nil || doc == nil {
		return []byte(substitute.Redacted)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
			return t
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
			return t
		default:
			return substitute.Redacted
		}
	}
	out, err := sigyaml.Marshal(walk(doc))
	if err != nil {
		return []byte(substitute.Redacted)
	}
	return out
}
