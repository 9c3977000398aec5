package stackfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/strictyaml"
	"github.com/fluxpack/fluxpack/layering"
)

// Stack file identity.
const (
	APIVersion = "fluxpack.dev/v1alpha1"
	Kind       = "Stack"
)

// ErrInvalid is returned when a stack file (or a fleet file) cannot be
// read as one; it wraps one *layering.FileError per problem.
var ErrInvalid = errors.New("invalid stack file")

// MaxSize is the largest stack file Load reads: 16 MiB. A larger one is
// an error wrapping ErrTooLarge.
const MaxSize = inputfile.MaxSize

// ErrTooLarge is wrapped by Load's error about a stack file over MaxSize:
// the value of outputs.ErrTooLarge and substitute.ErrTooLarge too.
var ErrTooLarge = errdefs.ErrTooLarge

// Doc is the stack file schema, what Parse decodes a file into before it
// makes a Builder of it (docs/stack.md documents it from this type). Field
// names are Flux's (Kustomization, OCIRepository, HelmRelease) wherever
// Flux has one.
type Doc struct {
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
	External           []layering.ObjectRef                       `json:"external,omitempty"`
	Vars               []stackVars                                `json:"vars,omitempty"`
	Wake               *stackWake                                 `json:"wake,omitempty"`
	Layers             []Layer                                    `json:"layers"`
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

// Layer is a layer entry of a stack file (spec.layers[]), the schema a
// fleet file's extraLayers use too. Its fields are those of Flux's
// Kustomization, plus the layer's place in the order and a HelmRelease.
type Layer struct {
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

// Load reads a stack file (apiVersion fluxpack.dev/v1alpha1, kind
// Stack) into a Builder, so Build, Lint and Graph work on it as on a stack
// written in Go. Decoding is strict: unknown fields, wrong types and missing
// required fields are all reported, each as a *FileError with the line,
// wrapped in ErrInvalid. Layer paths are relative to the file's
// directory, which Lint reads.
func Load(path string) (*layering.Builder, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading stack %s: %w", path, err)
	}
	d, doc, st, err := decodeFile[Doc](path, data, "stack", check)
	if err != nil {
		return nil, err
	}
	return builder(d, doc, st, filepath.Dir(path)), nil
}

// Once returns a stack maker for fleet.New that reads and decodes
// the stack file at path once, on its first call, and gives every call a
// Builder of its own, as Load(path) would: a fleet asks for the stack
// once per cluster and more, and decoding YAML was most of that. A problem
// with the file is every call's error. It is safe for use by several
// goroutines at once.
func Once(path string) func() (*layering.Builder, error) {
	var (
		once sync.Once
		d    *strictyaml.Decoder
		doc  *yaml.Node
		raw  []byte // the decoded Doc, as JSON: each call decodes its own
		err  error
	)
	return func() (*layering.Builder, error) {
		once.Do(func() {
			var data []byte
			if data, err = inputfile.Read(path); err != nil {
				err = fmt.Errorf("reading stack %s: %w", path, err)
				return
			}
			var st *Doc
			if d, doc, st, err = decodeFile[Doc](path, data, "stack", check); err != nil {
				return
			}
			raw, err = json.Marshal(st)
		})
		if err != nil {
			return nil, err
		}
		var st Doc
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("decoding stack %s: %w", path, err)
		}
		// builder reads d's file name and doc's lines only.
		return builder(d, doc, &st, filepath.Dir(path)), nil
	}
}

// Parse is Load on data; name is the file name used in errors.
func Parse(name string, data []byte) (*layering.Builder, error) {
	d, doc, st, err := decodeFile[Doc](name, data, "stack", check)
	if err != nil {
		return nil, err
	}
	return builder(d, doc, st, ""), nil
}

// decodeFile decodes the one YAML document of a stack or fleet file (what
// says which, for errors) into T, strictly, then runs check on it; every
// problem is a *FileError wrapped in ErrInvalid.
func decodeFile[T any](name string, data []byte, what string, check func(*strictyaml.Decoder, *yaml.Node, *T)) (*strictyaml.Decoder, *yaml.Node, *T, error) {
	var out T
	d, doc, err := strictyaml.File(name, data, what, hooks, &out)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if d.Err() == nil {
		check(d, doc, &out)
	}
	if err := d.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return d, doc, &out, nil
}

// hooks are the strict decoder's hooks for the stack file's types:
// durations checked as they are read.
var hooks = map[reflect.Type]strictyaml.Hook{strictyaml.DurationType: strictyaml.Duration}

// Shorthand reads a dependsOn entry given as the layer's name.
func (stackDep) Shorthand(n *yaml.Node) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		return nil, false
	}
	return map[string]any{"name": n.Value}, true
}

// jsonFields maps the JSON names of t's fields to their types, as the
// decoder reads them.
var jsonFields = strictyaml.Fields

// lineOf finds the line of a field path like spec.layers[2].name.
var lineOf = strictyaml.LineOf

// check reports what the schema's types cannot: required fields and
// identity.
func check(d *strictyaml.Decoder, doc *yaml.Node, st *Doc) {
	at := func(path ...any) *yaml.Node { return &yaml.Node{Line: lineOf(doc, path...)} }
	if st.APIVersion != APIVersion {
		d.Fail(at("apiVersion"), "apiVersion %q: want %s", st.APIVersion, APIVersion)
	}
	if st.Kind != Kind {
		d.Fail(at("kind"), "kind %q: want %s", st.Kind, Kind)
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
func builder(d *strictyaml.Decoder, doc *yaml.Node, st *Doc, dir string) *layering.Builder {
	opts := []layering.StackOption{layering.DeclaredIn(d.File)}
	if dir != "" {
		opts = append(opts, layering.RootDir(dir))
	}
	sp := &st.Spec
	if st.Metadata.Namespace != "" {
		opts = append(opts, layering.Namespace(st.Metadata.Namespace))
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
		opts = append(opts, layering.FromOCIRepository(spec))
	}
	if r := sp.SourceRef; r != nil {
		opts = append(opts, layering.FromSource(*r))
	}
	if sp.FluxDefaults {
		opts = append(opts, layering.FluxDefaults())
	}
	for _, d := range durations(sp.Interval, sp.RetryInterval, sp.Timeout) {
		opts = append(opts, d)
	}
	if sp.RenderedPath != "" {
		opts = append(opts, layering.RenderedPath(sp.RenderedPath))
	}
	if len(sp.ExistingNamespaces) > 0 {
		opts = append(opts, layering.ExistingNamespaces(sp.ExistingNamespaces...))
	}
	if len(sp.ExistingAPIGroups) > 0 {
		opts = append(opts, layering.ExistingAPIGroups(sp.ExistingAPIGroups...))
	}
	if len(sp.External) > 0 {
		opts = append(opts, layering.External(sp.External...))
	}
	for i, v := range sp.Vars {
		opts = append(opts, layering.VarsFrom(layering.VarsEntry{Name: v.Name, Outputs: v.Outputs, File: d.File, Line: lineOf(doc, "spec", "vars", i)}))
	}
	if w := sp.Wake; w != nil {
		var wo []layering.WakeOption
		if w.ReceiverURL != "" {
			wo = append(wo, layering.ReceiverURL(w.ReceiverURL))
		}
		opts = append(opts, layering.WakeDependents(wo...))
	}
	b := layering.New(st.Metadata.Name, opts...)
	for i, l := range sp.Layers {
		b.Layer(l.Name, append([]layering.StepOption{layering.DeclaredAt(d.File, lineOf(doc, "spec", "layers", i))}, l.Options()...)...)
	}
	return b
}

// durations are the Interval, RetryInterval and Timeout options of the
// durations that are set: spec and each layer take the same three.
func durations(interval, retryInterval, timeout *metav1.Duration) []layering.SharedOption {
	var o []layering.SharedOption
	if interval != nil {
		o = append(o, layering.Interval(interval.Duration))
	}
	if retryInterval != nil {
		o = append(o, layering.RetryInterval(retryInterval.Duration))
	}
	if timeout != nil {
		o = append(o, layering.Timeout(timeout.Duration))
	}
	return o
}

// Options are the builder options the layer entry stands for, in the
// order the file's fields are applied: what Load gives the layer, and
// what a fleet file's extraLayers give a cluster's extra layer.
func (l *Layer) Options() []layering.StepOption {
	var o []layering.StepOption
	for _, dep := range l.DependsOn {
		o = append(o, layering.DependsOn(dep.Name))
		if dep.ReadyExpr != "" {
			o = append(o, layering.ReadyExpr(dep.Name, dep.ReadyExpr))
		}
	}
	if l.DependsOnOperator {
		o = append(o, layering.DependsOnOperator())
	}
	if l.Operator {
		o = append(o, layering.MarkOperator())
	}
	if l.Path != nil {
		o = append(o, layering.Path(*l.Path))
	}
	if l.Prune != nil {
		o = append(o, layering.Prune(*l.Prune))
	}
	if l.DeletionPolicy != "" {
		o = append(o, layering.DeletionPolicy(layering.Deletion(l.DeletionPolicy)))
	}
	if l.Wait != nil {
		if *l.Wait {
			o = append(o, layering.Wait())
		} else {
			o = append(o, layering.NoWait())
		}
	}
	for _, d := range durations(l.Interval, l.RetryInterval, l.Timeout) {
		o = append(o, d)
	}
	if len(l.HealthChecks) > 0 {
		o = append(o, layering.HealthChecks(l.HealthChecks...))
	}
	if len(l.HealthCheckExprs) > 0 {
		o = append(o, layering.HealthCheckExprs(l.HealthCheckExprs...))
	}
	if l.TargetNamespace != "" {
		o = append(o, layering.TargetNamespace(l.TargetNamespace))
	}
	if pb := l.PostBuild; pb != nil {
		if len(pb.Substitute) > 0 {
			o = append(o, layering.Substitute(pb.Substitute))
		}
		if len(pb.SubstituteFrom) > 0 {
			o = append(o, layering.SubstituteFrom(pb.SubstituteFrom...))
		}
		if pb.SubstituteStrategy != "" {
			o = append(o, layering.SubstituteStrategy(pb.SubstituteStrategy))
		}
	}
	if len(l.Components) > 0 {
		o = append(o, layering.Components(l.Components...))
	}
	if len(l.Patches) > 0 {
		o = append(o, layering.Patches(l.Patches...))
	}
	if l.CommonMetadata != nil {
		o = append(o, layering.CommonMetadata(l.CommonMetadata.Labels, l.CommonMetadata.Annotations))
	}
	if l.Force {
		o = append(o, layering.Force())
	}
	if l.Suspend {
		o = append(o, layering.Suspend())
	}
	if l.SourceRef != nil {
		o = append(o, layering.SourceRef(*l.SourceRef))
	}
	if l.ServiceAccount != "" {
		o = append(o, layering.ServiceAccountName(l.ServiceAccount))
	}
	if l.Decryption != nil {
		o = append(o, layering.Decryption(*l.Decryption))
	}
	if len(l.Images) > 0 {
		o = append(o, layering.Images(l.Images...))
	}
	if l.NamePrefix != "" {
		o = append(o, layering.NamePrefix(l.NamePrefix))
	}
	if l.NameSuffix != "" {
		o = append(o, layering.NameSuffix(l.NameSuffix))
	}
	if g := l.WebhookGuard; g != nil {
		o = append(o, layering.WebhookGuard(layering.WebhookKind(g.Kind), g.Name))
	}
	if h := l.HelmRelease; h != nil {
		var ho []layering.HelmOption
		if h.ChartRef != nil {
			ho = append(ho, layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: h.ChartRef.Kind, Name: h.ChartRef.Name}))
		}
		if c := h.Chart; c != nil {
			ho = append(ho, layering.Chart(helmv2.HelmChartTemplateSpec{Chart: c.Chart, Version: c.Version,
				SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: c.SourceRef.Kind, Name: c.SourceRef.Name}}))
		}
		if len(h.ValuesFrom) > 0 {
			ho = append(ho, layering.ValuesFrom(h.ValuesFrom...))
		}
		if h.ReleaseName != "" {
			ho = append(ho, layering.ReleaseName(h.ReleaseName))
		}
		if h.TargetNamespace != "" {
			ho = append(ho, layering.ReleaseNamespace(h.TargetNamespace))
		}
		if h.CRDs != "" {
			ho = append(ho, layering.CRDs(helmv2.CRDsPolicy(h.CRDs)))
		}
		if h.CreateNamespace {
			ho = append(ho, layering.CreateNamespace())
		}
		if h.Values != nil {
			ho = append(ho, layering.Values(h.Values))
		}
		o = append(o, layering.HelmRelease(ho...))
	}
	return o
}

// Graph reads and builds a stack file and draws it (Plan.Graph).
func Graph(path string, format layering.GraphFormat) ([]byte, error) {
	b, err := Load(path)
	if err != nil {
		return nil, err
	}
	plan, err := b.Build()
	if err != nil {
		return nil, err
	}
	return plan.Graph(format)
}
