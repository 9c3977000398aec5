package layering

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/substitute"
)

// StepOption configures one layer (Layer, Then, and the parts of a preset).
// Only this package implements it. An option given bad input records an
// error that Build returns; it never panics.
type StepOption interface{ applyToStep(*step) }

// StackOption configures the whole stack (New). Only this package
// implements it. Interval, RetryInterval and Timeout are both: given to New
// they set the default of every layer.
type StackOption interface{ applyToStack(*stack) }

// step is one layer as the options describe it.
type step struct {
	name string
	file string // the stack file that declares the layer, and the line
	line int
	errs []error

	dependsOn         []string
	readyExpr         map[string]string
	dependsOnOperator bool
	operator          bool

	path                             *string
	interval, retryInterval, timeout *time.Duration
	prune, wait                      *bool
	deletionPolicy                   string
	healthChecks                     []meta.NamespacedObjectKindReference
	healthCheckExprs                 []kustomize.CustomHealthCheck
	targetNamespace                  string
	substitute                       map[string]string
	substituteFrom                   []kustomizev1.SubstituteReference
	components                       []string
	patches                          []kustomize.Patch
	commonMetadata                   *kustomizev1.CommonMetadata
	force                            bool
	suspend                          bool
	sourceRef                        *kustomizev1.CrossNamespaceSourceReference
	serviceAccountName               string
	decryption                       *kustomizev1.Decryption
	images                           []kustomize.Image
	namePrefix, nameSuffix           string
	substituteStrategy               kustomizev1.SubstituteStrategy
	guard                            *webhookGuard
	helm                             *helmSpec
}

func (s *step) errorf(kind error, format string, args ...any) {
	s.errs = append(s.errs, errdefs.Kind(kind, format, args...))
}

// invalidf records an invalid stack option, naming the stack.
func (s *stack) invalidf(format string, args ...any) {
	s.errs = append(s.errs, errdefs.Kind(ErrInvalidOption, "stack %q: "+format, append([]any{s.name}, args...)...))
}

// validNames returns the names that check (notLabel, notSubdomain) accepts,
// recording "invalid <what> <name>: <why>" for each one it does not.
func (s *stack) validNames(what string, names []string, check func(string) string) []string {
	var valid []string
	for _, name := range names {
		if msg := check(name); msg != "" {
			s.invalidf("invalid %s %q: %s", what, name, msg)
			continue
		}
		valid = append(valid, name)
	}
	return valid
}

// notLabel says why name is not a DNS-1123 label (a namespace's name), or
// returns "".
func notLabel(name string) string { return strings.Join(validation.IsDNS1123Label(name), "; ") }

// notSubdomain says why name is not a DNS-1123 subdomain (the name of most
// objects: ConfigMaps, ServiceAccounts; an API group), or returns "".
func notSubdomain(name string) string {
	return strings.Join(validation.IsDNS1123Subdomain(name), "; ")
}

// notRelative says why p is not a relative, slash-separated local path, as
// Flux's path fields take them, or returns "". With dotDot, ".." elements
// are allowed (spec.components are relative to spec.path and may go up).
func notRelative(p string, dotDot bool) string {
	switch {
	case p == "":
		return "empty path"
	case strings.Contains(p, "://"):
		return "want a local path, not a URL: fluxpack builds offline"
	case strings.Contains(p, `\`):
		return "want a slash-separated path"
	case path.IsAbs(p):
		return "want a relative path"
	case !dotDot && slices.Contains(strings.Split(p, "/"), ".."):
		return `want a path inside the source, without ".."`
	}
	return ""
}

// stack is the stack-wide settings New collects.
type stack struct {
	name, namespace string
	errs            []error

	oci       *sourcev1.OCIRepositorySpec
	sourceRef *kustomizev1.CrossNamespaceSourceReference

	interval, retryInterval, timeout time.Duration
	vars                             []string
	renderedPath                     string
	existingNamespaces               []string
	existingAPIGroups                []string
	external                         []ObjectRef
	fluxDefaults                     bool
	wake                             *wakeConfig
	verify                           *sourcev1.OCIRepositoryVerification

	// Set by a stack file's reader (DeclaredIn, RootDir, VarsFrom): the
	// stack file, its directory (the root layer paths are relative to) and
	// its vars entries with their outputs files.
	file, dir   string
	varsEntries []VarsEntry
}

// Defaults, written out in every Kustomization so none is implicit.
const (
	DefaultNamespace     = "flux-system"
	DefaultInterval      = 10 * time.Minute
	DefaultRetryInterval = 2 * time.Minute
	DefaultTimeout       = 5 * time.Minute
	DefaultRenderedPath  = "./flux"
)

type funcStep func(*step)

func (f funcStep) applyToStep(s *step) { f(s) }

type funcStack func(*stack)

func (f funcStack) applyToStack(s *stack) { f(s) }

// SharedOption is an option that works both for one layer and, given to
// New, as the default of every layer.
type SharedOption interface {
	StepOption
	StackOption
}

var (
	_ StepOption   = funcStep(nil)
	_ StackOption  = funcStack(nil)
	_ SharedOption = durationOption{}
	_ HelmOption   = funcHelm(nil)
)

// durationOption is Interval, RetryInterval or Timeout.
type durationOption struct {
	field string
	d     time.Duration
}

func (o durationOption) applyToStep(s *step) {
	if o.d <= 0 {
		s.errorf(ErrInvalidOption, "invalid %s %s: must be positive", o.field, o.d)
		return
	}
	d := o.d
	switch o.field {
	case "interval":
		s.interval = &d
	case "retryInterval":
		s.retryInterval = &d
	case "timeout":
		s.timeout = &d
	}
}

func (o durationOption) applyToStack(s *stack) {
	if o.d <= 0 {
		s.errs = append(s.errs, errdefs.Kind(ErrInvalidOption, "stack %q: invalid %s %s: must be positive", s.name, o.field, o.d))
		return
	}
	switch o.field {
	case "interval":
		s.interval = o.d
	case "retryInterval":
		s.retryInterval = o.d
	case "timeout":
		s.timeout = o.d
	}
}

// Interval sets spec.interval (default 10m), of one layer or, given to New,
// of every layer and of the OCIRepository.
func Interval(d time.Duration) SharedOption { return durationOption{"interval", d} }

// RetryInterval sets spec.retryInterval (default 2m): how soon a failed
// reconcile is retried.
func RetryInterval(d time.Duration) SharedOption { return durationOption{"retryInterval", d} }

// Timeout sets spec.timeout (default 5m): how long apply and health checks
// may take.
func Timeout(d time.Duration) SharedOption { return durationOption{"timeout", d} }

// --- stack options ---

// FromOCI makes the stack's source an OCIRepository named after the stack,
// pulling url (oci://host/repository) at tag. Build emits it.
func FromOCI(url, tag string) StackOption {
	return FromOCIRepository(sourcev1.OCIRepositorySpec{URL: url, Reference: &sourcev1.OCIRepositoryRef{Tag: tag}})
}

// FromOCIRepository is FromOCI with every OCIRepository field: semver or
// digest references, secretRef, provider, verify, layerSelector, insecure.
// A zero Interval takes the stack's.
func FromOCIRepository(spec sourcev1.OCIRepositorySpec) StackOption {
	return funcStack(func(s *stack) {
		spec := spec
		s.oci = &spec
		s.sourceRef = nil
	})
}

// FromSource makes every layer use an existing source (for instance the
// GitRepository flux-system that flux bootstrap creates) instead of an
// OCIRepository of its own; Build emits no source. Its kind is
// OCIRepository, GitRepository, Bucket or ExternalArtifact.
func FromSource(ref kustomizev1.CrossNamespaceSourceReference) StackOption {
	return funcStack(func(s *stack) {
		s.sourceRef = &ref
		s.oci = nil
	})
}

// FluxDefaults leaves unset every field the stack does not set, so that
// Flux's own defaults apply (no retryInterval, timeout interval minus 30s,
// wait: false, deletionPolicy MirrorPrune) instead of the safe defaults
// this package writes out. An imported repository uses it, so that its
// Kustomizations render as they were.
func FluxDefaults() StackOption {
	return funcStack(func(s *stack) { s.fluxDefaults = true })
}

// Namespace sets the namespace of every emitted object (default flux-system).
func Namespace(ns string) StackOption {
	return funcStack(func(s *stack) { s.namespace = ns })
}

// Vars adds, to every layer, spec.postBuild.substituteFrom entries for the
// ConfigMap that package substitute renders from IaC outputs (its plain
// outputs), then for the Secret of the same name (its sensitive outputs),
// optional because it is applied out of band, never pushed.
func Vars(configMaps ...string) StackOption {
	return funcStack(func(s *stack) {
		s.vars = append(s.vars, s.validNames("vars ConfigMap name", configMaps, notSubdomain)...)
	})
}

// RenderedPath is where the rendered directory sits in the source
// (default ./flux). HelmRelease layers are wrapped in a Kustomization whose
// path is <RenderedPath>/releases/<layer>. It is relative to the source's
// root, slash-separated, without "..".
func RenderedPath(p string) StackOption {
	return funcStack(func(s *stack) {
		if msg := notRelative(p, false); msg != "" {
			s.invalidf("invalid renderedPath %q: %s", p, msg)
			return
		}
		s.renderedPath = p
	})
}

// ExistingNamespaces names namespaces that exist before the stack (created
// by IaC, say), so lint does not ask a layer to create them. default,
// kube-system, kube-public, kube-node-lease and the stack's namespace always
// exist.
func ExistingNamespaces(names ...string) StackOption {
	return funcStack(func(s *stack) {
		s.existingNamespaces = append(s.existingNamespaces, s.validNames("existing namespace", names, notLabel)...)
	})
}

// --- step options ---

// DependsOn makes the layer depend on the named layers (spec.dependsOn), in
// addition to the previous layer when added with Then.
func DependsOn(layers ...string) StepOption {
	return funcStep(func(s *step) { s.dependsOn = append(s.dependsOn, layers...) })
}

// DependsOnOperator makes the layer depend on the nearest earlier layer
// marked as an operator (MarkOperator), so its custom resources wait for the
// operator's admission webhook, not just for the CRDs.
func DependsOnOperator() StepOption {
	return funcStep(func(s *step) { s.dependsOnOperator = true })
}

// ReadyExpr sets the CEL readyExpr of the dependency on layer (over dep and
// self), replacing Flux's built-in readiness check for that dependency.
func ReadyExpr(layer, expr string) StepOption {
	return funcStep(func(s *step) {
		if expr == "" {
			s.errorf(ErrInvalidOption, "empty readyExpr for dependency %q", layer)
			return
		}
		if s.readyExpr == nil {
			s.readyExpr = map[string]string{}
		}
		s.readyExpr[layer] = expr
	})
}

// MarkOperator marks the layer as the operator serving admission webhooks
// for the CRDs of the layers it depends on: DependsOnOperator finds it and
// lint requires the CR layers to depend on it.
func MarkOperator() StepOption { return funcStep(func(s *step) { s.operator = true }) }

// Path sets spec.path, relative to the source root (default ./<layer>).
func Path(p string) StepOption {
	return funcStep(func(s *step) {
		if p == "" {
			s.errorf(ErrMissingPath, "empty path")
			return
		}
		s.path = &p
	})
}

// NoPrune sets prune: false: objects removed from the source stay in the
// cluster (prune: true is the default). KeepOnDelete also keeps them when
// the layer is deleted.
func NoPrune() StepOption { f := false; return funcStep(func(s *step) { s.prune = &f }) }

// KeepOnDelete sets prune: false and deletionPolicy: Orphan: objects stay in
// the cluster when removed from the source or when the layer is deleted.
// Use it for CRDs: deleting a CRD deletes every custom resource.
func KeepOnDelete() StepOption {
	return funcStep(func(s *step) {
		f := false
		s.prune = &f
		s.deletionPolicy = kustomizev1.DeletionPolicyOrphan
	})
}

// Deletion is a Kustomization's spec.deletionPolicy: what happens to its
// objects when the Kustomization is deleted.
type Deletion string

// The deletion policies (kustomize-controller's).
const (
	DeletionMirrorPrune        Deletion = kustomizev1.DeletionPolicyMirrorPrune // delete them if prune is on (the default)
	DeletionDelete             Deletion = kustomizev1.DeletionPolicyDelete
	DeletionWaitForTermination Deletion = kustomizev1.DeletionPolicyWaitForTermination
	DeletionOrphan             Deletion = kustomizev1.DeletionPolicyOrphan // leave them in the cluster
)

// DeletionPolicy sets spec.deletionPolicy.
func DeletionPolicy(p Deletion) StepOption {
	return funcStep(func(s *step) {
		switch p {
		case DeletionMirrorPrune, DeletionDelete, DeletionWaitForTermination, DeletionOrphan:
			s.deletionPolicy = string(p)
		default:
			s.errorf(ErrInvalidOption, "invalid deletionPolicy %q: want MirrorPrune, Delete, WaitForTermination or Orphan", p)
		}
	})
}

// Wait sets spec.wait: the layer is Ready only when every object it applied
// is. It is the default unless the layer has HealthChecks (Flux ignores
// healthChecks under wait).
func Wait() StepOption { t := true; return funcStep(func(s *step) { s.wait = &t }) }

// NoWait sets wait: false: the layer is Ready once applied.
func NoWait() StepOption { f := false; return funcStep(func(s *step) { s.wait = &f }) }

// HealthChecks adds spec.healthChecks; the layer then defaults to wait: false.
func HealthChecks(refs ...meta.NamespacedObjectKindReference) StepOption {
	return funcStep(func(s *step) {
		for _, r := range refs {
			if r.Kind == "" || r.Name == "" {
				s.errorf(ErrInvalidOption, "health check %s/%s: kind and name are required", r.Kind, r.Name)
				continue
			}
			s.healthChecks = append(s.healthChecks, r)
		}
	})
}

// HealthCheckExprs adds spec.healthCheckExprs: CEL expressions that say when
// objects of a kind are Current, InProgress or Failed.
func HealthCheckExprs(exprs ...kustomize.CustomHealthCheck) StepOption {
	return funcStep(func(s *step) {
		for _, e := range exprs {
			if e.APIVersion == "" || e.Current == "" {
				s.errorf(ErrInvalidOption, "health check expression for %s %s: apiVersion and current are required", e.APIVersion, e.Kind)
				continue
			}
			s.healthCheckExprs = append(s.healthCheckExprs, e)
		}
	})
}

// TargetNamespace sets spec.targetNamespace: the namespace of every
// namespaced object of the layer.
func TargetNamespace(ns string) StepOption {
	return funcStep(func(s *step) {
		if msg := notLabel(ns); msg != "" {
			s.errorf(ErrInvalidOption, "invalid targetNamespace %q: %s", ns, msg)
			return
		}
		s.targetNamespace = ns
	})
}

// Substitute adds spec.postBuild.substitute variables (inline values win over
// SubstituteFrom). Sensitive values belong in a Secret given to
// SubstituteFrom, never here. Names are Flux's variable names
// (substitute.VarNamePattern).
func Substitute(vars map[string]string) StepOption {
	return funcStep(func(s *step) {
		if s.substitute == nil {
			s.substitute = map[string]string{}
		}
		for _, name := range sortedKeys(vars) {
			if !substitute.ValidVarName(name) {
				s.errorf(ErrInvalidOption, "invalid substitute variable name %q: want %s", name, substitute.VarNamePattern)
				continue
			}
			s.substitute[name] = vars[name]
		}
	})
}

// SubstituteFrom adds spec.postBuild.substituteFrom entries (ConfigMaps or
// Secrets, later ones win).
func SubstituteFrom(refs ...kustomizev1.SubstituteReference) StepOption {
	return funcStep(func(s *step) {
		for _, r := range refs {
			if (r.Kind != "ConfigMap" && r.Kind != "Secret") || r.Name == "" {
				s.errorf(ErrInvalidOption, "invalid substituteFrom %s/%s: want kind ConfigMap or Secret and a name", r.Kind, r.Name)
				continue
			}
			s.substituteFrom = append(s.substituteFrom, r)
		}
	})
}

// Components adds spec.components: paths of kustomize components,
// relative to the layer's spec.path (they may go up with "..", but not out
// of the source).
func Components(paths ...string) StepOption {
	return funcStep(func(s *step) {
		for _, p := range paths {
			if msg := notRelative(p, true); msg != "" {
				s.errorf(ErrInvalidOption, "invalid component %q: %s", p, msg)
				continue
			}
			s.components = append(s.components, p)
		}
	})
}

// Patches adds spec.patches.
func Patches(patches ...kustomize.Patch) StepOption {
	return funcStep(func(s *step) { s.patches = append(s.patches, patches...) })
}

// CommonMetadata sets spec.commonMetadata: labels and annotations put on
// every object of the layer.
func CommonMetadata(labels, annotations map[string]string) StepOption {
	return funcStep(func(s *step) {
		s.commonMetadata = &kustomizev1.CommonMetadata{Labels: maps.Clone(labels), Annotations: maps.Clone(annotations)}
	})
}

// Force sets spec.force: immutable fields are changed by recreating objects.
func Force() StepOption { return funcStep(func(s *step) { s.force = true }) }

// SourceRef makes this layer read another source than the stack's.
func SourceRef(ref kustomizev1.CrossNamespaceSourceReference) StepOption {
	return funcStep(func(s *step) {
		if ref.Kind == "" || ref.Name == "" {
			s.errorf(ErrInvalidOption, "sourceRef %s/%s: kind and name are required", ref.Kind, ref.Name)
			return
		}
		s.sourceRef = &ref
	})
}

// ServiceAccountName sets spec.serviceAccountName: the account
// kustomize-controller impersonates to apply the layer (multi-tenancy).
// Kubernetes names service accounts with DNS-1123 subdomains.
func ServiceAccountName(name string) StepOption {
	return funcStep(func(s *step) {
		if msg := notSubdomain(name); msg != "" {
			s.errorf(ErrInvalidOption, "invalid serviceAccountName %q: %s", name, msg)
			return
		}
		s.serviceAccountName = name
	})
}

// Suspend sets spec.suspend: kustomize-controller leaves the layer alone
// until someone resumes it (flux resume kustomization), so the layer is
// declared, and deployed only on demand (an opt-in platform). Layers that
// depend on it wait for it as for any other.
func Suspend() StepOption {
	return funcStep(func(s *step) { s.suspend = true })
}

// Decryption sets spec.decryption: SOPS decryption of the layer's Secrets.
func Decryption(d kustomizev1.Decryption) StepOption {
	return funcStep(func(s *step) {
		if d.Provider != "sops" {
			s.errorf(ErrInvalidOption, "invalid decryption provider %q: want sops", d.Provider)
			return
		}
		s.decryption = &d
	})
}

// Images adds spec.images: image name, tag or digest overrides.
func Images(images ...kustomize.Image) StepOption {
	return funcStep(func(s *step) { s.images = append(s.images, images...) })
}

// NamePrefix and NameSuffix set spec.namePrefix and spec.nameSuffix.
func NamePrefix(p string) StepOption { return funcStep(func(s *step) { s.namePrefix = p }) }

// NameSuffix sets spec.nameSuffix.
func NameSuffix(p string) StepOption { return funcStep(func(s *step) { s.nameSuffix = p }) }

// SubstituteAlways sets spec.postBuild.substituteStrategy: Always, so that
// substitution runs (and $$ is unescaped) even without variables.
func SubstituteAlways() StepOption {
	return funcStep(func(s *step) { s.substituteStrategy = kustomizev1.SubstituteStrategyAlways })
}

// webhookGuard is the readiness guard for an operator's admission webhook.
type webhookGuard struct {
	kind WebhookKind
	name string
}

// WebhookKind is the kind of an admission webhook configuration.
type WebhookKind string

// The kinds of admission webhook configurations.
const (
	ValidatingWebhook WebhookKind = "ValidatingWebhookConfiguration"
	MutatingWebhook   WebhookKind = "MutatingWebhookConfiguration"
)

// WebhookGuard makes the layer Ready only once the admission webhook
// configuration kind/name (ValidatingWebhookConfiguration or
// MutatingWebhookConfiguration) has a caBundle on every webhook: a health
// check on it plus a CEL expression, for operators whose caBundle is
// injected after their pods are ready (cert-manager's cainjector), which
// wait alone does not see. The layer uses health checks instead of wait, so
// it also needs a health check on the operator's workload; a HelmRelease
// layer gets one on its HelmRelease.
func WebhookGuard(kind WebhookKind, name string) StepOption {
	return funcStep(func(s *step) {
		if kind != ValidatingWebhook && kind != MutatingWebhook {
			s.errorf(ErrInvalidOption, "invalid webhook guard kind %q: want ValidatingWebhookConfiguration or MutatingWebhookConfiguration", kind)
			return
		}
		if name == "" {
			s.errorf(ErrInvalidOption, "webhook guard %s: name is required", kind)
			return
		}
		s.guard = &webhookGuard{kind: kind, name: name}
	})
}

// caBundleExpr is Current when every webhook of the configuration has a CA
// bundle, so the API server can call it.
const caBundleExpr = "has(self.webhooks) && self.webhooks.all(w, has(w.clientConfig.caBundle) && w.clientConfig.caBundle != '')"

// --- HelmRelease layers ---

// HelmOption configures the HelmRelease of a layer made with HelmRelease.
// Only this package implements it.
type HelmOption interface{ applyToHelm(*helmSpec) }

type helmSpec struct {
	chartRef         *helmv2.CrossNamespaceSourceReference
	chart            *helmv2.HelmChartTemplate
	valuesFrom       []helmv2.ValuesReference
	releaseName      string
	releaseNamespace string
	crds             helmv2.CRDsPolicy
	values           *apiextensionsv1.JSON
	createNamespace  bool
	errs             []string
}

// Values sets spec.values: inline values, merged over the chart's and
// valuesFrom's (helm-controller's order). Any JSON object.
func Values(values map[string]any) HelmOption {
	return funcHelm(func(h *helmSpec) {
		raw, err := json.Marshal(values)
		if err != nil {
			h.errs = append(h.errs, fmt.Sprintf("invalid values: %v", err))
			return
		}
		h.values = &apiextensionsv1.JSON{Raw: raw}
	})
}

// CreateNamespace sets install.createNamespace: helm-controller creates the
// release namespace, as Argo CD's CreateNamespace=true sync option does.
func CreateNamespace() HelmOption {
	return funcHelm(func(h *helmSpec) { h.createNamespace = true })
}

type funcHelm func(*helmSpec)

func (f funcHelm) applyToHelm(h *helmSpec) { f(h) }

// HelmRelease makes the layer install a Helm chart: Build emits a
// HelmRelease (helm.toolkit.fluxcd.io/v2) under releases/<layer>/ and wraps
// it in the layer's Kustomization (wait: true), since Kustomizations can
// only depend on Kustomizations. Give ChartRef or Chart.
func HelmRelease(opts ...HelmOption) StepOption {
	return funcStep(func(s *step) {
		if s.helm == nil {
			s.helm = &helmSpec{}
		}
		for _, o := range opts {
			if o == nil {
				s.errorf(ErrInvalidOption, "nil HelmOption")
				continue
			}
			o.applyToHelm(s.helm)
		}
	})
}

// ChartRef sets spec.chartRef: an OCIRepository or HelmChart holding the chart.
func ChartRef(ref helmv2.CrossNamespaceSourceReference) HelmOption {
	return funcHelm(func(h *helmSpec) {
		if ref.Kind != sourcev1.OCIRepositoryKind && ref.Kind != sourcev1.HelmChartKind {
			h.errs = append(h.errs, fmt.Sprintf("invalid chartRef kind %q: want OCIRepository or HelmChart", ref.Kind))
			return
		}
		if ref.Name == "" {
			h.errs = append(h.errs, "chartRef: a name is required")
			return
		}
		h.chartRef = &ref
	})
}

// Chart sets spec.chart: spec.chart at spec.version from spec.sourceRef (a
// HelmRepository, GitRepository or Bucket).
func Chart(spec helmv2.HelmChartTemplateSpec) HelmOption {
	return funcHelm(func(h *helmSpec) {
		if spec.Chart == "" || spec.SourceRef == nil || spec.SourceRef.Kind == "" || spec.SourceRef.Name == "" {
			h.errs = append(h.errs, "chart: chart and sourceRef (kind and name) are required")
			return
		}
		h.chart = &helmv2.HelmChartTemplate{Spec: *spec.DeepCopy()}
	})
}

// ValuesFrom adds spec.valuesFrom: ConfigMap or Secret keys holding values,
// such as the per-service values ConfigMaps of package outputs. An empty
// key means values.yaml.
func ValuesFrom(refs ...helmv2.ValuesReference) HelmOption {
	return funcHelm(func(h *helmSpec) {
		for _, r := range refs {
			if (r.Kind != "ConfigMap" && r.Kind != "Secret") || r.Name == "" {
				h.errs = append(h.errs, fmt.Sprintf("invalid valuesFrom %s/%s: want kind ConfigMap or Secret and a name", r.Kind, r.Name))
				continue
			}
			h.valuesFrom = append(h.valuesFrom, r)
		}
	})
}

// ReleaseName sets spec.releaseName, which Helm requires to be a DNS-1123
// subdomain of at most 53 characters.
func ReleaseName(name string) HelmOption {
	return funcHelm(func(h *helmSpec) {
		if msg := releaseNameProblem(name); msg != "" {
			h.errs = append(h.errs, fmt.Sprintf("invalid releaseName %q: %s", name, msg))
			return
		}
		h.releaseName = name
	})
}

// ReleaseNamespace sets spec.targetNamespace and spec.storageNamespace: where
// the chart is installed.
func ReleaseNamespace(ns string) HelmOption {
	return funcHelm(func(h *helmSpec) {
		if msg := notLabel(ns); msg != "" {
			h.errs = append(h.errs, fmt.Sprintf("invalid release namespace %q: %s", ns, msg))
			return
		}
		h.releaseNamespace = ns
	})
}

// CRDs sets install.crds and upgrade.crds. The default is Create on install
// and Skip on upgrade (Flux's), and Skip on both when the CRDs have their own
// layer (the Operator preset).
func CRDs(policy helmv2.CRDsPolicy) HelmOption {
	return funcHelm(func(h *helmSpec) {
		switch policy {
		case helmv2.Skip, helmv2.Create, helmv2.CreateReplace:
			h.crds = policy
		default:
			h.errs = append(h.errs, fmt.Sprintf("invalid crds policy %q: want Skip, Create or CreateReplace", policy))
		}
	})
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// External declares objects made outside the stack before it is applied
// (the ConfigMap or Secret of cluster variables that Terraform writes, say),
// so lint does not ask a layer to create what a substituteFrom or a health
// check names. A namespace "" matches any namespace.
func External(refs ...ObjectRef) StackOption {
	return funcStack(func(s *stack) {
		for _, r := range refs {
			if r.Kind == "" || r.Name == "" {
				s.errs = append(s.errs, errdefs.Kind(ErrInvalidOption, "stack %q: external object %s: kind and name are required", s.name, r))
				continue
			}
			s.external = append(s.external, r)
		}
	})
}

// ExistingAPIGroups names API groups whose CRDs exist before the stack
// (installed by IaC, say), so lint does not ask a layer to define them.
// An API group is a DNS-1123 subdomain (cert-manager.io).
func ExistingAPIGroups(groups ...string) StackOption {
	return funcStack(func(s *stack) {
		s.existingAPIGroups = append(s.existingAPIGroups, s.validNames("existing API group", groups, notSubdomain)...)
	})
}

// maxReleaseName is the longest release name Helm accepts: its Secret
// (sh.helm.release.v1.NAME.vN) must stay a valid object name.
const maxReleaseName = 53

// releaseNameProblem says why Helm would refuse name as a release name
// (helm's chartutil.ValidateReleaseName: a DNS-1123 subdomain of at most
// 53 characters), or "". It is checked here rather than through Helm's
// SDK so that the model does not link Helm and client-go.
func releaseNameProblem(name string) string {
	if name == "" {
		return "release name is empty"
	}
	if len(name) > maxReleaseName {
		return fmt.Sprintf("release name exceeds max length of %d", maxReleaseName)
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return strings.Join(msgs, "; ")
	}
	return ""
}
