package layering

import (
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StackSettings are the options a Builder's stack was given, as given, not
// as Build resolves them: what a writer of stack files (package stackfile)
// writes back. They share the Builder's slices and maps: read them, do not
// change them.
type StackSettings struct {
	Name, Namespace string
	// OCI is the stack's own OCIRepository (FromOCI, FromOCIRepository),
	// SourceRef the source it reads instead (FromSource).
	OCI       *sourcev1.OCIRepositorySpec
	SourceRef *kustomizev1.CrossNamespaceSourceReference
	// FluxDefaults is true for FluxDefaults.
	FluxDefaults                     bool
	Interval, RetryInterval, Timeout time.Duration
	RenderedPath                     string
	ExistingNamespaces               []string
	ExistingAPIGroups                []string
	External                         []ObjectRef
	Vars                             []VarsEntry
	Layers                           []LayerSettings
}

// LayerSettings are the options one layer was given; nil or zero is an
// option not given (its default applies).
type LayerSettings struct {
	Name                             string
	Path                             *string
	DependsOn                        []string
	ReadyExpr                        map[string]string // by dependency
	DependsOnOperator, Operator      bool
	Wait, Prune                      *bool
	DeletionPolicy                   string
	Interval, RetryInterval, Timeout *time.Duration
	HealthChecks                     []meta.NamespacedObjectKindReference
	HealthCheckExprs                 []kustomize.CustomHealthCheck
	TargetNamespace                  string
	Substitute                       map[string]string
	SubstituteFrom                   []kustomizev1.SubstituteReference
	SubstituteStrategy               kustomizev1.SubstituteStrategy
	Components                       []string
	Patches                          []kustomize.Patch
	CommonMetadata                   *kustomizev1.CommonMetadata
	Force, Suspend                   bool
	SourceRef                        *kustomizev1.CrossNamespaceSourceReference
	ServiceAccountName               string
	Decryption                       *kustomizev1.Decryption
	Images                           []kustomize.Image
	NamePrefix, NameSuffix           string
	// WebhookGuardKind and WebhookGuardName are WebhookGuard's, or empty.
	WebhookGuardKind WebhookKind
	WebhookGuardName string
	HelmRelease      *HelmSettings
}

// HelmSettings are the options of a HelmRelease layer.
type HelmSettings struct {
	ChartRef         *helmv2.CrossNamespaceSourceReference
	Chart            *helmv2.HelmChartTemplate
	ValuesFrom       []helmv2.ValuesReference
	ReleaseName      string
	ReleaseNamespace string
	CRDs             helmv2.CRDsPolicy
	Values           *apiextensionsv1.JSON
	CreateNamespace  bool
}

// Settings returns the options the stack and each of its layers were
// given (a preset's layers one by one).
func (b *Builder) Settings() StackSettings {
	st := &b.stack
	out := StackSettings{
		Name: st.name, Namespace: st.namespace, OCI: st.oci, SourceRef: st.sourceRef, FluxDefaults: st.fluxDefaults,
		Interval: st.interval, RetryInterval: st.retryInterval, Timeout: st.timeout, RenderedPath: st.renderedPath,
		ExistingNamespaces: st.existingNamespaces, ExistingAPIGroups: st.existingAPIGroups, External: st.external,
		Vars: b.VarsEntries(),
	}
	for _, s := range b.steps {
		l := LayerSettings{
			Name: s.name, Path: s.path, DependsOn: s.dependsOn, ReadyExpr: s.readyExpr,
			DependsOnOperator: s.dependsOnOperator, Operator: s.operator,
			Wait: s.wait, Prune: s.prune, DeletionPolicy: s.deletionPolicy,
			Interval: s.interval, RetryInterval: s.retryInterval, Timeout: s.timeout,
			HealthChecks: s.healthChecks, HealthCheckExprs: s.healthCheckExprs, TargetNamespace: s.targetNamespace,
			Substitute: s.substitute, SubstituteFrom: s.substituteFrom, SubstituteStrategy: s.substituteStrategy,
			Components: s.components, Patches: s.patches, CommonMetadata: s.commonMetadata, Force: s.force,
			Suspend: s.suspend, SourceRef: s.sourceRef, ServiceAccountName: s.serviceAccountName, Decryption: s.decryption,
			Images: s.images, NamePrefix: s.namePrefix, NameSuffix: s.nameSuffix,
		}
		if g := s.guard; g != nil {
			l.WebhookGuardKind, l.WebhookGuardName = g.kind, g.name
		}
		if h := s.helm; h != nil {
			l.HelmRelease = &HelmSettings{ChartRef: h.chartRef, Chart: h.chart, ValuesFrom: h.valuesFrom, ReleaseName: h.releaseName,
				ReleaseNamespace: h.releaseNamespace, CRDs: h.crds, Values: h.values, CreateNamespace: h.createNamespace}
		}
		out.Layers = append(out.Layers, l)
	}
	return out
}
