package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/suggest"
)

// Plan is a platform's layers as Flux's own typed objects: a built stack,
// ready to write, or the Kustomizations of a Flux repository (package
// fluxrepo), ready to lint and draw.
type Plan struct {
	Name      string
	Namespace string
	// Source is the stack's OCIRepository, or nil when the stack uses an
	// existing source (FromSource).
	Source *sourcev1.OCIRepository
	// sourceRef is the source the stack's own layers read (Build's); a
	// layer with another reads a tree that is not the stack's folder.
	sourceRef kustomizev1.CrossNamespaceSourceReference
	// Layers are in declaration order.
	Layers []Layer

	// ExistingNamespaces and ExistingAPIGroups exist before the layers
	// (made by IaC, say): lint asks no layer to create them.
	ExistingNamespaces []string
	ExistingAPIGroups  []string
	// External are objects made outside the platform before it (by
	// Terraform, say) that a substituteFrom or health check may name.
	External []ObjectRef
	// Wake are the objects that wake each layer's dependents when it
	// becomes Ready (WakeDependents), or nil.
	Wake *Wake
	// Vars are the stack's vars entries: the ConfigMaps of variables the
	// layers substitute, each rendered from an IaC outputs file.
	Vars []VarsEntry
	// File is the stack file the Plan was read from and Dir its folder
	// (where the vars entries' outputs files are relative to); both are
	// empty for a Plan declared in Go or read from a repository.
	File string
	Dir  string
}

// VarsEntry is a vars entry of a stack: the ConfigMap Name that package
// outputs renders from the IaC Outputs file (relative to Plan.Dir), and
// where the entry is declared (empty for one declared in Go).
type VarsEntry struct {
	Name    string
	Outputs string
	File    string
	Line    int
}

// Layer is one layer of a Plan: a Flux Kustomization.
type Layer struct {
	// Name names the layer: the Kustomization's name, or namespace/name
	// for a Kustomization outside the Plan's namespace.
	Name string
	// DependsOn names the layers this one waits for, as Name does.
	DependsOn []string
	// Operator is true for layers marked with MarkOperator.
	Operator bool
	// Parent names the layer that applies this one's Kustomization (in a
	// repository, Kustomizations apply Kustomizations), or "": its objects
	// exist before this layer reconciles, though they may not be Ready.
	Parent string
	// File and Line are where the layer is declared: the stack file, or the
	// file of a repository's Kustomization; empty for a layer declared in
	// Go.
	File string
	Line int
	// Kustomization gates the layer: every layer has one.
	Kustomization *kustomizev1.Kustomization
	// HelmRelease is the release a HelmRelease layer's Kustomization
	// applies, or nil.
	HelmRelease *helmv2.HelmRelease
}

func (b *Builder) emit(nodes []*node) *Plan {
	st := &b.stack
	p := &Plan{
		Name: st.name, Namespace: st.namespace,
		ExistingNamespaces: slices.Clone(st.existingNamespaces), ExistingAPIGroups: slices.Clone(st.existingAPIGroups),
		External: slices.Clone(st.external),
		File:     st.file, Dir: st.dir,
	}
	for _, name := range st.vars {
		v := VarsEntry{Name: name}
		if i := slices.IndexFunc(st.varsEntries, func(e VarsEntry) bool { return e.Name == name }); i >= 0 {
			v = st.varsEntries[i]
		}
		p.Vars = append(p.Vars, v)
	}
	srcRef := kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: st.name}
	switch {
	case st.sourceRef != nil:
		srcRef = *st.sourceRef
	case st.oci != nil: // nil in a Draft of a stack without a source, which Build refuses
		spec := *st.oci.DeepCopy()
		if spec.Interval == nil {
			spec.Interval = &metav1.Duration{Duration: st.interval}
		}
		if spec.Reference == nil {
			spec.Reference = &sourcev1.OCIRepositoryRef{Tag: "latest"}
		}
		if st.verify != nil {
			spec.Verify = st.verify.DeepCopy()
		}
		p.Source = &sourcev1.OCIRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
			ObjectMeta: metav1.ObjectMeta{Name: st.name, Namespace: st.namespace, Finalizers: st.finalizers()},
			Spec:       spec,
		}
	}
	p.sourceRef = srcRef
	for _, n := range nodes {
		p.Layers = append(p.Layers, b.emitLayer(n, srcRef))
	}
	if st.wake != nil {
		wakePath := path.Join(st.renderedPath, "wake")
		if st.renderedPath != "" && st.renderedPath[0] == '.' {
			wakePath = "./" + wakePath
		}
		p.Wake = p.emitWake(WakeTarget{
			Name: wakeName(st.name), Namespace: st.namespace, SourceRef: srcRef, Path: wakePath,
			Interval: DefaultWakeInterval, ReceiverURL: st.wake.receiverURL,
		})
	}
	return p
}

func dur(d *time.Duration, def time.Duration) metav1.Duration {
	if d != nil {
		return metav1.Duration{Duration: *d}
	}
	return metav1.Duration{Duration: def}
}

func (b *Builder) emitLayer(n *node, srcRef kustomizev1.CrossNamespaceSourceReference) Layer {
	st := &b.stack
	s := n.step
	interval := dur(s.interval, st.interval)
	retry := dur(s.retryInterval, st.retryInterval)
	timeout := dur(s.timeout, st.timeout)
	spec := kustomizev1.KustomizationSpec{
		Interval:           interval,
		RetryInterval:      &retry,
		Timeout:            &timeout,
		SourceRef:          srcRef,
		Prune:              true,
		DeletionPolicy:     kustomizev1.DeletionPolicyMirrorPrune,
		ServiceAccountName: s.serviceAccountName,
		Decryption:         s.decryption,
		Images:             slices.Clone(s.images),
		NamePrefix:         s.namePrefix,
		NameSuffix:         s.nameSuffix,
		TargetNamespace:    s.targetNamespace,
		Components:         slices.Clone(s.components),
		Patches:            slices.Clone(s.patches),
		CommonMetadata:     s.commonMetadata,
		Force:              s.force,
		Suspend:            s.suspend,
		HealthChecks:       slices.Clone(s.healthChecks),
		HealthCheckExprs:   slices.Clone(s.healthCheckExprs),
	}
	if s.sourceRef != nil {
		spec.SourceRef = *s.sourceRef
	}
	if st.fluxDefaults {
		// Only what the stack sets: Flux's defaults for the rest.
		spec.RetryInterval, spec.Timeout, spec.DeletionPolicy = nil, nil, ""
		if s.retryInterval != nil {
			spec.RetryInterval = &retry
		}
		if s.timeout != nil {
			spec.Timeout = &timeout
		}
	}
	if s.prune != nil {
		spec.Prune = *s.prune
	}
	if s.deletionPolicy != "" {
		spec.DeletionPolicy = s.deletionPolicy
	}
	for _, d := range n.deps {
		spec.DependsOn = append(spec.DependsOn, meta.DependencyReference{Name: d, ReadyExpr: s.readyExpr[d]})
	}
	if len(st.vars) > 0 || len(s.substitute) > 0 || len(s.substituteFrom) > 0 || s.substituteStrategy != "" {
		pb := &kustomizev1.PostBuild{Substitute: s.substitute, SubstituteStrategy: s.substituteStrategy}
		for _, v := range st.vars {
			// The sensitive outputs go to a Secret of the same name, which
			// is applied out of band (never pushed), hence optional.
			pb.SubstituteFrom = append(pb.SubstituteFrom,
				kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: v},
				kustomizev1.SubstituteReference{Kind: "Secret", Name: v, Optional: true})
		}
		pb.SubstituteFrom = append(pb.SubstituteFrom, s.substituteFrom...)
		spec.PostBuild = pb
	}

	l := Layer{Name: s.name, DependsOn: slices.Clone(n.deps), Operator: s.operator, File: s.file, Line: s.line}
	if s.helm != nil {
		spec.Path = path.Join(st.renderedPath, "releases", s.name)
		if st.renderedPath != "" && st.renderedPath[0] == '.' {
			spec.Path = "./" + spec.Path
		}
		l.HelmRelease = b.emitRelease(s, interval, timeout)
	} else {
		spec.Path = "./" + s.name
		if s.path != nil {
			spec.Path = *s.path
		}
	}
	// Wait is the default; health checks (and the webhook guard, which is
	// health checks) replace it, since Flux ignores them under wait.
	spec.Wait = len(spec.HealthChecks) == 0 && s.guard == nil && !st.fluxDefaults
	if s.wait != nil {
		spec.Wait = *s.wait
	}
	if g := s.guard; g != nil {
		if l.HelmRelease != nil {
			spec.HealthChecks = append(spec.HealthChecks, meta.NamespacedObjectKindReference{
				APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind, Name: s.name, Namespace: st.namespace,
			})
		}
		spec.HealthChecks = append(spec.HealthChecks, meta.NamespacedObjectKindReference{
			APIVersion: "admissionregistration.k8s.io/v1", Kind: string(g.kind), Name: g.name,
		})
		spec.HealthCheckExprs = append(spec.HealthCheckExprs, kustomize.CustomHealthCheck{
			APIVersion: "admissionregistration.k8s.io/v1", Kind: string(g.kind),
			HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: caBundleExpr},
		})
	}
	l.Kustomization = &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: st.namespace, Finalizers: st.finalizers()},
		Spec:       spec,
	}
	return l
}

// FluxFinalizer is the finalizer every Flux controller puts on the objects
// it reconciles (kustomize-, helm-, source- and notification-controller
// alike). A controller that finds it missing adds it and requeues the
// object, which then waits --min-retry-delay (750ms in stock Flux) before
// its first reconcile: on a fresh cluster, the first layers, each
// HelmRelease a layer applies and the Receiver of wake start that much
// later. So the objects a stack renders carry it already; the controller
// removes it once it has finalised the object, as always.
const FluxFinalizer = "finalizers.fluxcd.io"

// finalizers are the finalizers of the objects a stack renders: none with
// FluxDefaults, which renders a repository's objects as they were.
func (st *stack) finalizers() []string {
	if st.fluxDefaults {
		return nil
	}
	return []string{FluxFinalizer}
}

// Remediation retries of emitted HelmReleases: a failed install or upgrade
// is rolled back and retried instead of left failed.
const helmRetries = 3

func (b *Builder) emitRelease(s *step, interval, timeout metav1.Duration) *helmv2.HelmRelease {
	h := s.helm
	install, upgrade := helmv2.Create, helmv2.Skip
	if h.crds != "" {
		install, upgrade = h.crds, h.crds
	}
	spec := helmv2.HelmReleaseSpec{
		Interval:         interval,
		Timeout:          &timeout,
		ReleaseName:      h.releaseName,
		TargetNamespace:  h.releaseNamespace,
		StorageNamespace: h.releaseNamespace,
		ValuesFrom:       slices.Clone(h.valuesFrom),
		Install:          &helmv2.Install{CRDs: install, Remediation: &helmv2.InstallRemediation{Retries: helmRetries}},
		Upgrade:          &helmv2.Upgrade{CRDs: upgrade, Remediation: &helmv2.UpgradeRemediation{Retries: helmRetries}},
	}
	if h.chartRef != nil {
		ref := *h.chartRef
		spec.ChartRef = &ref
	}
	if h.values != nil {
		spec.Values = h.values.DeepCopy()
	}
	spec.Install.CreateNamespace = h.createNamespace
	if h.chart != nil {
		spec.Chart = h.chart.DeepCopy()
	}
	return &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: b.stack.namespace, Finalizers: b.stack.finalizers()},
		Spec:       spec,
	}
}

// File is one file of a rendered Plan.
type File struct {
	Path string // slash-separated, relative to the output directory
	Data []byte
}

// Files returns the rendered files in a fixed order: kustomization.yaml,
// source.yaml (when the stack has its own OCIRepository), layers/<layer>.yaml
// for each layer, releases/<layer>/helmrelease.yaml for HelmRelease layers
// and, when the Plan has Wake objects, wake.yaml (Provider, Alert, Receiver
// and the wake Kustomization, applied with the layers) and
// wake/kustomization.yaml (the wake Kustomization's folder, empty). The bytes
// depend only on the Plan.
//
// Extra files (say the variables' ConfigMaps under vars/) are written
// after the layers and listed in kustomization.yaml.
func (p *Plan) Files(extra ...File) ([]File, error) { return p.files(extra) }

// WriteTo writes the rendered files to w as one stream, each file after a
// "--- <path>" line, in the order of Files.
func (p *Plan) WriteTo(w io.Writer) (int64, error) {
	files, err := p.Files()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range files {
		m, err := fmt.Fprintf(w, "--- %s\n%s", f.Path, f.Data)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// files is Files with extra files (under vars/) written after the layers
// and listed in kustomization.sigyaml.
func (p *Plan) files(extra []File) ([]File, error) {
	var files []File
	var resources []string
	add := func(name string, obj any, listed bool) error {
		data, err := marshal(obj)
		if err != nil {
			return fmt.Errorf("rendering %s: %w", name, err)
		}
		files = append(files, File{Path: name, Data: data})
		if listed {
			resources = append(resources, name)
		}
		return nil
	}
	if p.Source != nil {
		if err := add("source.yaml", p.Source, true); err != nil {
			return nil, err
		}
	}
	for _, l := range p.Layers {
		if err := add("layers/"+l.Name+".yaml", l.Kustomization, true); err != nil {
			return nil, err
		}
		if l.HelmRelease != nil {
			if err := add("releases/"+l.Name+"/helmrelease.yaml", l.HelmRelease, false); err != nil {
				return nil, err
			}
		}
	}
	if w := p.Wake; w != nil {
		// wake.yaml holds the wake objects, applied with the layers; the
		// wake Kustomization reconciles the empty wake/.
		wf, err := w.files("wake")
		if err != nil {
			return nil, err
		}
		files = append(files, wf[1:]...)
		resources = append(resources, "wake.yaml")
	}
	for _, f := range extra {
		files = append(files, f)
		resources = append(resources, f.Path)
	}
	k, err := sigyaml.Marshal(struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}{"kustomize.config.k8s.io/v1beta1", "Kustomization", resources})
	if err != nil {
		return nil, err
	}
	header := []byte("# Rendered by fluxpack from stack " + p.Name + ". Do not edit: change the stack and render again.\n")
	return append([]File{{Path: "kustomization.yaml", Data: append(header, k...)}}, files...), nil
}

// marshal writes obj as `flux ... --export` does: sigs.k8s.io/yaml without
// the creationTimestamp and status that a fresh object has. The returned
// bytes may be shared with other calls: callers must not change them.
func marshal(obj any) ([]byte, error) {
	// sigs.k8s.io/yaml.Marshal is json.Marshal then JSONToYAML, which
	// costs most of it; a fleet renders the same objects (a layer's
	// Kustomization, unchanged by the cluster) again for every cluster, so
	// the YAML of each JSON is remembered.
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	_, secret := obj.(*corev1.Secret) // never kept: it may hold sensitive values
	if data, ok := yamlOfJSON.get(j); ok && !secret {
		return data, nil
	}
	data, err := sigyaml.JSONToYAML(j)
	if err != nil {
		return nil, fmt.Errorf("error converting JSON to YAML: %w", err)
	}
	data = bytes.Replace(data, []byte("  creationTimestamp: null\n"), nil, 1)
	data = bytes.Replace(data, []byte("status: {}\n"), nil, 1)
	data = slices.Clip(append(bytes.TrimSpace(data), '\n'))
	if !secret {
		yamlOfJSON.put(j, data)
	}
	return data, nil
}

// yamlOfJSON remembers marshal's output by its JSON.
var yamlOfJSON = memo{limit: 2 << 20}

// memo maps byte strings to byte strings, up to limit bytes of both; when
// full it starts again empty. It is safe for use by several goroutines.
type memo struct {
	mu    sync.Mutex
	m     map[string][]byte
	size  int
	limit int
}

func (c *memo) get(k []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[string(k)]
	return v, ok
}

func (c *memo) put(k, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.size+len(k)+len(v) > c.limit {
		c.m, c.size = map[string][]byte{}, 0
	}
	if len(k)+len(v) <= c.limit {
		c.m[string(k)] = v
		c.size += len(k) + len(v)
	}
}

// Problems are what a Plan that was not built by a Builder (one read from
// a repository) can have that Build would refuse: two layers with one
// name, dependencies on layers the Plan does not have, cycles. Each is a
// *LayerError; none for a Plan Build returned.
func (p *Plan) Problems() []error {
	var errs []error
	names := make([]string, len(p.Layers))
	deps := make([][]string, len(p.Layers))
	first := map[string]*Layer{}
	for i := range p.Layers {
		l := &p.Layers[i]
		names[i], deps[i] = l.Name, l.DependsOn
		if f, dup := first[l.Name]; dup {
			errs = append(errs, &LayerError{Layer: l.Name, File: l.File, Line: l.Line,
				Err: errdefs.Kind(ErrDuplicateLayer, "two Kustomizations named %s (the other at %s:%d): Flux applies whichever comes last", l.Name, f.File, f.Line)})
			continue
		}
		first[l.Name] = l
	}
	for _, l := range p.Layers {
		for _, d := range l.DependsOn {
			if _, ok := first[d]; !ok {
				errs = append(errs, &LayerError{Layer: l.Name, File: l.File, Line: l.Line,
					Err: errdefs.Kind(ErrUnknownDependency, "depends on %s, which the platform does not have: Flux waits for it, and the layer never becomes Ready%s", p.KustomizationRef(d), suggest.DidYouMean(d, names))})
			}
		}
	}
	for _, c := range cycles(names, deps) {
		l := first[c[0]]
		errs = append(errs, &LayerError{Layer: l.Name, File: l.File, Line: l.Line, Err: errdefs.Kind(ErrCycle, "dependency cycle %s", strings.Join(c, " -> "))})
	}
	return errs
}

// KustomizationRef names the Kustomization of a layer name as Flux's
// events do: Kustomization/namespace/name.
func (p *Plan) KustomizationRef(name string) string {
	if strings.Contains(name, "/") {
		return "Kustomization/" + name
	}
	return "Kustomization/" + p.Namespace + "/" + name
}
