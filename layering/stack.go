package layering

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/strictyaml"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// Stack file identity.
const (
	StackAPIVersion = "fluxpack.dev/v1alpha1"
	StackKind       = "Stack"
)

// The stack file schema. Field names are Flux's (Kustomization, OCIRepository,
// HelmRelease) wherever Flux has one.
type stackDoc struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   stackMeta `json:"metadata"`
	Spec       stackSpec `json:"spec"`
}

type stackMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type stackSpec struct {
	Source             *stackSource                               `json:"source,omitempty"`
	SourceRef          *kustomizev1.CrossNamespaceSourceReference `json:"sourceRef,omitempty"`
	Interval           *metav1.Duration                           `json:"interval,omitempty"`
	RetryInterval      *metav1.Duration                           `json:"retryInterval,omitempty"`
	Timeout            *metav1.Duration                           `json:"timeout,omitempty"`
	RenderedPath       string                                     `json:"renderedPath,omitempty"`
	ExistingNamespaces []string                                   `json:"existingNamespaces,omitempty"`
	ExistingAPIGroups  []string                                   `json:"existingAPIGroups,omitempty"`
	FluxDefaults       bool                                       `json:"fluxDefaults,omitempty"`
	External           []ObjectRef                                `json:"external,omitempty"`
	Vars               []stackVars                                `json:"vars,omitempty"`
	Wake               *stackWake                                 `json:"wake,omitempty"`
	Layers             []stackLayer                               `json:"layers"`
}

// stackSource is OCIRepository's spec with the ref flattened, as the issue
// writes it: {url, tag}.
type stackSource struct {
	URL                string                              `json:"url"`
	Tag                string                              `json:"tag,omitempty"`
	SemVer             string                              `json:"semver,omitempty"`
	SemverFilter       string                              `json:"semverFilter,omitempty"`
	Digest             string                              `json:"digest,omitempty"`
	Insecure           bool                                `json:"insecure,omitempty"`
	Provider           string                              `json:"provider,omitempty"`
	SecretRef          *meta.LocalObjectReference          `json:"secretRef,omitempty"`
	CertSecretRef      *meta.LocalObjectReference          `json:"certSecretRef,omitempty"`
	ServiceAccountName string                              `json:"serviceAccountName,omitempty"`
	Verify             *sourcev1.OCIRepositoryVerification `json:"verify,omitempty"`
	LayerSelector      *sourcev1.OCILayerSelector          `json:"layerSelector,omitempty"`
	Interval           *metav1.Duration                    `json:"interval,omitempty"`
	Timeout            *metav1.Duration                    `json:"timeout,omitempty"`
	Ignore             *string                             `json:"ignore,omitempty"`
}

// stackWake turns WakeDependents on: `wake: {}`, or with the receiver's
// URL.
type stackWake struct {
	ReceiverURL string `json:"receiverURL,omitempty"`
}

// stackVars is a vars entry of a stack file: the ConfigMap Name that
// package outputs renders from the IaC Outputs file (relative to the stack
// file).
type stackVars struct {
	Outputs string `json:"outputs,omitempty"`
	Name    string `json:"name"`
}

type stackLayer struct {
	Name              string                                     `json:"name"`
	Path              *string                                    `json:"path,omitempty"`
	DependsOn         []stackDep                                 `json:"dependsOn,omitempty"`
	DependsOnOperator bool                                       `json:"dependsOnOperator,omitempty"`
	Operator          bool                                       `json:"operator,omitempty"`
	Wait              *bool                                      `json:"wait,omitempty"`
	Prune             *bool                                      `json:"prune,omitempty"`
	DeletionPolicy    string                                     `json:"deletionPolicy,omitempty"`
	Interval          *metav1.Duration                           `json:"interval,omitempty"`
	RetryInterval     *metav1.Duration                           `json:"retryInterval,omitempty"`
	Timeout           *metav1.Duration                           `json:"timeout,omitempty"`
	HealthChecks      []meta.NamespacedObjectKindReference       `json:"healthChecks,omitempty"`
	HealthCheckExprs  []kustomize.CustomHealthCheck              `json:"healthCheckExprs,omitempty"`
	TargetNamespace   string                                     `json:"targetNamespace,omitempty"`
	PostBuild         *stackPostBuild                            `json:"postBuild,omitempty"`
	Components        []string                                   `json:"components,omitempty"`
	Patches           []kustomize.Patch                          `json:"patches,omitempty"`
	CommonMetadata    *kustomizev1.CommonMetadata                `json:"commonMetadata,omitempty"`
	Force             bool                                       `json:"force,omitempty"`
	Suspend           bool                                       `json:"suspend,omitempty"`
	SourceRef         *kustomizev1.CrossNamespaceSourceReference `json:"sourceRef,omitempty"`
	ServiceAccount    string                                     `json:"serviceAccountName,omitempty"`
	Decryption        *kustomizev1.Decryption                    `json:"decryption,omitempty"`
	Images            []kustomize.Image                          `json:"images,omitempty"`
	NamePrefix        string                                     `json:"namePrefix,omitempty"`
	NameSuffix        string                                     `json:"nameSuffix,omitempty"`
	WebhookGuard      *stackGuard                                `json:"webhookGuard,omitempty"`
	HelmRelease       *stackHelm                                 `json:"helmRelease,omitempty"`
}

// stackDep is a dependsOn entry: a layer name, or {name, readyExpr}.
type stackDep struct {
	Name      string `json:"name"`
	ReadyExpr string `json:"readyExpr,omitempty"`
}

type stackPostBuild struct {
	Substitute         map[string]string                 `json:"substitute,omitempty"`
	SubstituteFrom     []kustomizev1.SubstituteReference `json:"substituteFrom,omitempty"`
	SubstituteStrategy kustomizev1.SubstituteStrategy    `json:"substituteStrategy,omitempty"`
}

type stackGuard struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type stackHelm struct {
	ChartRef        *stackRef                `json:"chartRef,omitempty"`
	Chart           *stackChart              `json:"chart,omitempty"`
	ValuesFrom      []helmv2.ValuesReference `json:"valuesFrom,omitempty"`
	ReleaseName     string                   `json:"releaseName,omitempty"`
	TargetNamespace string                   `json:"targetNamespace,omitempty"`
	CRDs            string                   `json:"crds,omitempty"`
	CreateNamespace bool                     `json:"createNamespace,omitempty"`
	Values          map[string]any           `json:"values,omitempty"`
}

type stackRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type stackChart struct {
	Chart     string   `json:"chart"`
	Version   string   `json:"version,omitempty"`
	SourceRef stackRef `json:"sourceRef"`
}

// LoadStack reads a stack file (apiVersion fluxpack.dev/v1alpha1, kind
// Stack) into a Builder, so Build, Lint and Graph work on it as on a stack
// written in Go. Decoding is strict: unknown fields, wrong types and missing
// required fields are all reported, each as a *FileError with the line,
// wrapped in ErrInvalidStack. Layer paths are relative to the file's
// directory, which Lint reads.
func LoadStack(path string) (*Builder, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading stack %s: %w", path, err)
	}
	d, doc, st, err := decodeFile[stackDoc](path, data, "stack", check)
	if err != nil {
		return nil, err
	}
	return builder(d, doc, st, filepath.Dir(path)), nil
}

// StackFileOnce returns a stack maker for NewFleet that reads and decodes
// the stack file at path once, on its first call, and gives every call a
// Builder of its own, as LoadStack(path) would: a fleet asks for the stack
// once per cluster and more, and decoding YAML was most of that. A problem
// with the file is every call's error. It is safe for use by several
// goroutines at once.
func StackFileOnce(path string) func() (*Builder, error) {
	var (
		once sync.Once
		d    *strictyaml.Decoder
		doc  *yaml.Node
		raw  []byte // the decoded stackDoc, as JSON: each call decodes its own
		err  error
	)
	return func() (*Builder, error) {
		once.Do(func() {
			var data []byte
			if data, err = inputfile.Read(path); err != nil {
				err = fmt.Errorf("reading stack %s: %w", path, err)
				return
			}
			var st *stackDoc
			if d, doc, st, err = decodeFile[stackDoc](path, data, "stack", check); err != nil {
				return
			}
			raw, err = json.Marshal(st)
		})
		if err != nil {
			return nil, err
		}
		var st stackDoc
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("decoding stack %s: %w", path, err)
		}
		// builder reads d's file name and doc's lines only.
		return builder(d, doc, &st, filepath.Dir(path)), nil
	}
}

// ParseStack is LoadStack on data; name is the file name used in errors.
func ParseStack(name string, data []byte) (*Builder, error) {
	d, doc, st, err := decodeFile[stackDoc](name, data, "stack", check)
	if err != nil {
		return nil, err
	}
	return builder(d, doc, st, ""), nil
}

// decodeFile decodes the one YAML document of a stack or fleet file (what
// says which, for errors) into T, strictly, then runs check on it; every
// problem is a *FileError wrapped in ErrInvalidStack.
func decodeFile[T any](name string, data []byte, what string, check func(*strictyaml.Decoder, *yaml.Node, *T)) (*strictyaml.Decoder, *yaml.Node, *T, error) {
	doc, err := strictyaml.Document(name, data, what)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalidStack, err)
	}
	if av, kind := yamlutil.Str(doc, "apiVersion"), yamlutil.Str(doc, "kind"); strings.HasPrefix(av, "kustomize.toolkit.fluxcd.io/") && kind == "Kustomization" {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalidStack, &FileError{Path: name, Line: doc.Line, Err: fmt.Errorf(
			"this is a Flux Kustomization (%s), not a fluxpack %s file: give the folder that applies it (for instance clusters/<name>) as the entry point, fluxpack lint DIR, or turn the repository into a stack with fluxpack import DIR", av, what)})
	}
	d := &strictyaml.Decoder{File: name, Root: "the stack", Hooks: hooks}
	var out T
	d.Decode(doc, &out)
	if d.Err() == nil {
		check(d, doc, &out)
	}
	if err := d.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalidStack, err)
	}
	return d, doc, &out, nil
}

// hooks are the stack file's shorthands: durations checked as they are
// read, a dependsOn entry given as the layer's name.
var hooks = map[reflect.Type]strictyaml.Hook{
	strictyaml.DurationType: strictyaml.Duration,
	reflect.TypeFor[stackDep](): func(n *yaml.Node, _ string, _ func(string, ...any)) (any, bool) {
		if n.Kind != yaml.ScalarNode {
			return nil, false
		}
		return map[string]any{"name": n.Value}, true
	},
}

// jsonFields maps the JSON names of t's fields to their types, as the
// decoder reads them.
var jsonFields = strictyaml.Fields

// lineOf finds the line of a field path like spec.layers[2].name.
var lineOf = strictyaml.LineOf

// check reports what the schema's types cannot: required fields and
// identity.
func check(d *strictyaml.Decoder, doc *yaml.Node, st *stackDoc) {
	at := func(path ...any) *yaml.Node { return &yaml.Node{Line: lineOf(doc, path...)} }
	if st.APIVersion != StackAPIVersion {
		d.Fail(at("apiVersion"), "apiVersion %q: want %s", st.APIVersion, StackAPIVersion)
	}
	if st.Kind != StackKind {
		d.Fail(at("kind"), "kind %q: want %s", st.Kind, StackKind)
	}
	if st.Metadata.Name == "" {
		d.Fail(at("metadata"), "metadata.name is required")
	}
	sp := &st.Spec
	switch {
	case sp.Source == nil && sp.SourceRef == nil:
		d.Fail(at("spec"), "spec.source (an OCIRepository) or spec.sourceRef is required")
	case sp.Source != nil && sp.SourceRef != nil:
		d.Fail(at("spec", "sourceRef"), "spec.source and spec.sourceRef exclude each other")
	case sp.Source != nil && sp.Source.URL == "":
		d.Fail(at("spec", "source"), "spec.source.url is required")
	}
	if len(sp.Layers) == 0 {
		d.Fail(at("spec"), "spec.layers: at least one layer is required")
	}
	for i, l := range sp.Layers {
		if l.Name == "" {
			d.Fail(at("spec", "layers", i), "spec.layers[%d].name is required", i)
		}
		for j, dep := range l.DependsOn {
			if dep.Name == "" {
				d.Fail(at("spec", "layers", i, "dependsOn", j), "spec.layers[%d].dependsOn[%d].name is required", i, j)
			}
		}
	}
	for i, v := range sp.Vars {
		if v.Name == "" {
			d.Fail(at("spec", "vars", i), "spec.vars[%d].name is required", i)
		}
	}
}

// builder turns a decoded stack into Builder calls, so the stack file and
// the Go API share one model and one validation.
func builder(d *strictyaml.Decoder, doc *yaml.Node, st *stackDoc, dir string) *Builder {
	opts := []StackOption{DeclaredIn(d.File)}
	if dir != "" {
		opts = append(opts, RootDir(dir))
	}
	sp := &st.Spec
	if st.Metadata.Namespace != "" {
		opts = append(opts, Namespace(st.Metadata.Namespace))
	}
	if s := sp.Source; s != nil {
		spec := sourcev1.OCIRepositorySpec{
			URL: s.URL, Insecure: s.Insecure, Provider: s.Provider, SecretRef: s.SecretRef,
			CertSecretRef: s.CertSecretRef, ServiceAccountName: s.ServiceAccountName,
			Verify: s.Verify, LayerSelector: s.LayerSelector, Interval: s.Interval, Timeout: s.Timeout, Ignore: s.Ignore,
		}
		if s.Tag != "" || s.SemVer != "" || s.Digest != "" {
			spec.Reference = &sourcev1.OCIRepositoryRef{Tag: s.Tag, SemVer: s.SemVer, SemverFilter: s.SemverFilter, Digest: s.Digest}
		}
		opts = append(opts, FromOCIRepository(spec))
	}
	if r := sp.SourceRef; r != nil {
		opts = append(opts, FromSource(*r))
	}
	if sp.FluxDefaults {
		opts = append(opts, FluxDefaults())
	}
	if sp.Interval != nil {
		opts = append(opts, Interval(sp.Interval.Duration))
	}
	if sp.RetryInterval != nil {
		opts = append(opts, RetryInterval(sp.RetryInterval.Duration))
	}
	if sp.Timeout != nil {
		opts = append(opts, Timeout(sp.Timeout.Duration))
	}
	if sp.RenderedPath != "" {
		opts = append(opts, RenderedPath(sp.RenderedPath))
	}
	if len(sp.ExistingNamespaces) > 0 {
		opts = append(opts, ExistingNamespaces(sp.ExistingNamespaces...))
	}
	if len(sp.ExistingAPIGroups) > 0 {
		opts = append(opts, ExistingAPIGroups(sp.ExistingAPIGroups...))
	}
	if len(sp.External) > 0 {
		opts = append(opts, External(sp.External...))
	}
	for i, v := range sp.Vars {
		opts = append(opts, VarsFrom(VarsEntry{Name: v.Name, Outputs: v.Outputs, File: d.File, Line: lineOf(doc, "spec", "vars", i)}))
	}
	if w := sp.Wake; w != nil {
		var wo []WakeOption
		if w.ReceiverURL != "" {
			wo = append(wo, ReceiverURL(w.ReceiverURL))
		}
		opts = append(opts, WakeDependents(wo...))
	}
	b := New(st.Metadata.Name, opts...)
	for i, l := range sp.Layers {
		b.Layer(l.Name, append([]StepOption{DeclaredAt(d.File, lineOf(doc, "spec", "layers", i))}, layerOptions(&l)...)...)
	}
	return b
}

func layerOptions(l *stackLayer) []StepOption {
	var o []StepOption
	for _, dep := range l.DependsOn {
		o = append(o, DependsOn(dep.Name))
		if dep.ReadyExpr != "" {
			o = append(o, ReadyExpr(dep.Name, dep.ReadyExpr))
		}
	}
	if l.DependsOnOperator {
		o = append(o, DependsOnOperator())
	}
	if l.Operator {
		o = append(o, MarkOperator())
	}
	if l.Path != nil {
		o = append(o, Path(*l.Path))
	}
	if l.Prune != nil {
		o = append(o, Prune(*l.Prune))
	}
	if l.DeletionPolicy != "" {
		o = append(o, DeletionPolicy(Deletion(l.DeletionPolicy)))
	}
	if l.Wait != nil {
		if *l.Wait {
			o = append(o, Wait())
		} else {
			o = append(o, NoWait())
		}
	}
	if l.Interval != nil {
		o = append(o, Interval(l.Interval.Duration))
	}
	if l.RetryInterval != nil {
		o = append(o, RetryInterval(l.RetryInterval.Duration))
	}
	if l.Timeout != nil {
		o = append(o, Timeout(l.Timeout.Duration))
	}
	if len(l.HealthChecks) > 0 {
		o = append(o, HealthChecks(l.HealthChecks...))
	}
	if len(l.HealthCheckExprs) > 0 {
		o = append(o, HealthCheckExprs(l.HealthCheckExprs...))
	}
	if l.TargetNamespace != "" {
		o = append(o, TargetNamespace(l.TargetNamespace))
	}
	if pb := l.PostBuild; pb != nil {
		if len(pb.Substitute) > 0 {
			o = append(o, Substitute(pb.Substitute))
		}
		if len(pb.SubstituteFrom) > 0 {
			o = append(o, SubstituteFrom(pb.SubstituteFrom...))
		}
		if pb.SubstituteStrategy != "" {
			o = append(o, SubstituteStrategy(pb.SubstituteStrategy))
		}
	}
	if len(l.Components) > 0 {
		o = append(o, Components(l.Components...))
	}
	if len(l.Patches) > 0 {
		o = append(o, Patches(l.Patches...))
	}
	if l.CommonMetadata != nil {
		o = append(o, CommonMetadata(l.CommonMetadata.Labels, l.CommonMetadata.Annotations))
	}
	if l.Force {
		o = append(o, Force())
	}
	if l.Suspend {
		o = append(o, Suspend())
	}
	if l.SourceRef != nil {
		o = append(o, SourceRef(*l.SourceRef))
	}
	if l.ServiceAccount != "" {
		o = append(o, ServiceAccountName(l.ServiceAccount))
	}
	if l.Decryption != nil {
		o = append(o, Decryption(*l.Decryption))
	}
	if len(l.Images) > 0 {
		o = append(o, Images(l.Images...))
	}
	if l.NamePrefix != "" {
		o = append(o, NamePrefix(l.NamePrefix))
	}
	if l.NameSuffix != "" {
		o = append(o, NameSuffix(l.NameSuffix))
	}
	if g := l.WebhookGuard; g != nil {
		o = append(o, WebhookGuard(WebhookKind(g.Kind), g.Name))
	}
	if h := l.HelmRelease; h != nil {
		var ho []HelmOption
		if h.ChartRef != nil {
			ho = append(ho, ChartRef(helmv2.CrossNamespaceSourceReference{Kind: h.ChartRef.Kind, Name: h.ChartRef.Name}))
		}
		if c := h.Chart; c != nil {
			ho = append(ho, Chart(helmv2.HelmChartTemplateSpec{Chart: c.Chart, Version: c.Version,
				SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: c.SourceRef.Kind, Name: c.SourceRef.Name}}))
		}
		if len(h.ValuesFrom) > 0 {
			ho = append(ho, ValuesFrom(h.ValuesFrom...))
		}
		if h.ReleaseName != "" {
			ho = append(ho, ReleaseName(h.ReleaseName))
		}
		if h.TargetNamespace != "" {
			ho = append(ho, ReleaseNamespace(h.TargetNamespace))
		}
		if h.CRDs != "" {
			ho = append(ho, CRDs(helmv2.CRDsPolicy(h.CRDs)))
		}
		if h.CreateNamespace {
			ho = append(ho, CreateNamespace())
		}
		if h.Values != nil {
			ho = append(ho, Values(h.Values))
		}
		o = append(o, HelmRelease(ho...))
	}
	return o
}
