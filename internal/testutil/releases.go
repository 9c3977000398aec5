package testutil

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ReleaseCase is one HelmRelease rendered from fluxbuild's test chart
// (fluxbuild/testdata/charts/secrets-operator) with the ConfigMaps and
// Secrets the cluster holds: a case of fluxbuild's tests and of the e2e
// test that holds fluxbuild.RenderRelease to a real helm-controller.
type ReleaseCase struct {
	Name    string
	Spec    helmv2.HelmReleaseSpec
	Sources []runtime.Object
	// WantErr is a substring of the error RenderRelease gives, if it fails
	// (helm-controller fails the release too); "" when it renders.
	WantErr string
}

func helmValues(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func valuesConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"}, Data: data}
}

func valuesSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// ReleaseCases cover the values merge (chart defaults, valuesFrom in
// order, inline values, targetPath, optional references, Secrets), the
// CRD policies, the release's name and namespace, and the post-renderers.
func ReleaseCases() []ReleaseCase {
	return []ReleaseCase{
		{Name: "defaults"},
		{Name: "inline-values", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"replicaCount":3,"clusterName":"inline"}`)}},
		{Name: "values-from-configmap", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
			Sources: []runtime.Object{valuesConfigMap("vals", map[string]string{"values.yaml": "clusterName: from-configmap\nreplicaCount: 2\n"})}},
		{Name: "values-from-key", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals", ValuesKey: "prod.yaml"}}},
			Sources: []runtime.Object{valuesConfigMap("vals", map[string]string{"prod.yaml": "clusterName: prod\n"})}},
		{Name: "values-from-order", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
			{Kind: "ConfigMap", Name: "first"}, {Kind: "ConfigMap", Name: "second"}}},
			Sources: []runtime.Object{
				valuesConfigMap("first", map[string]string{"values.yaml": "clusterName: first\nreplicaCount: 5\n"}),
				valuesConfigMap("second", map[string]string{"values.yaml": "clusterName: second\n"})}},
		{Name: "inline-wins", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"clusterName":"inline"}`),
			ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
			Sources: []runtime.Object{valuesConfigMap("vals", map[string]string{"values.yaml": "clusterName: from-configmap\nreplicaCount: 4\n"})}},
		{Name: "target-path", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
			{Kind: "ConfigMap", Name: "vars", ValuesKey: "cluster_name", TargetPath: "clusterName"}}},
			Sources: []runtime.Object{valuesConfigMap("vars", map[string]string{"cluster_name": "mycluster-0"})}},
		{Name: "target-path-wins-over-inline", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"clusterName":"inline"}`),
			ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vars", ValuesKey: "cluster_name", TargetPath: "clusterName"}}},
			Sources: []runtime.Object{valuesConfigMap("vars", map[string]string{"cluster_name": "from-target-path"})}},
		{Name: "target-path-number", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
			{Kind: "ConfigMap", Name: "vars", ValuesKey: "replicas", TargetPath: "replicaCount"}}},
			Sources: []runtime.Object{valuesConfigMap("vars", map[string]string{"replicas": "7"})}},
		{Name: "target-path-literal", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
			{Kind: "ConfigMap", Name: "vars", ValuesKey: "v", TargetPath: "clusterName", Literal: true}}},
			Sources: []runtime.Object{valuesConfigMap("vars", map[string]string{"v": "a,b=c"})}},
		{Name: "secret-values", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "token", ValuesKey: "token", TargetPath: "token"}}},
			Sources: []runtime.Object{valuesSecret("token", map[string]string{"token": "s3cr3t"})}},
		{Name: "secret-values-yaml", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "vals"}}},
			Sources: []runtime.Object{valuesSecret("vals", map[string]string{"values.yaml": "token: from-secret\n"})}},
		{Name: "optional-missing", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "absent", Optional: true}}}},
		{Name: "optional-missing-key", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals", ValuesKey: "nope", Optional: true}}},
			Sources: []runtime.Object{valuesConfigMap("vals", map[string]string{"values.yaml": "clusterName: x\n"})}},
		{Name: "missing", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "absent"}}},
			WantErr: `ConfigMap chart values reference 'flux-system/absent' with key 'values.yaml': configmaps "absent" not found`},
		{Name: "missing-key", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "vals", ValuesKey: "nope"}}},
			Sources: []runtime.Object{valuesSecret("vals", map[string]string{"values.yaml": "a: b\n"})}, WantErr: "reference 'flux-system/vals' with key 'nope': key not found"},
		{Name: "values-not-yaml", Spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
			Sources: []runtime.Object{valuesConfigMap("vals", map[string]string{"values.yaml": "a: [b\n"})}, WantErr: "error converting YAML to JSON"},
		{Name: "crds-skip", Spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: helmv2.Skip}}},
		{Name: "crds-create-replace", Spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: helmv2.CreateReplace}}},
		{Name: "crds-invalid", Spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: "Sometimes"}}, WantErr: `spec.install.crds "Sometimes"`},
		{Name: "release-name", Spec: helmv2.HelmReleaseSpec{ReleaseName: "eso"}},
		{Name: "target-namespace", Spec: helmv2.HelmReleaseSpec{TargetNamespace: "external-secrets"}},
		{Name: "long-name", Spec: helmv2.HelmReleaseSpec{TargetNamespace: "a-very-long-target-namespace-name-for-tenants"}},
		{Name: "webhook-disabled", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"webhook":{"enabled":false}}`)}},
		{Name: "common-metadata", Spec: helmv2.HelmReleaseSpec{CommonMetadata: &helmv2.CommonMetadata{
			Labels: map[string]string{"team": "platform", "helm.toolkit.fluxcd.io/name": "overridden"}, Annotations: map[string]string{"owner": "sre"}}}},
		{Name: "post-renderer-patch", Spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
			Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"},
				Patch: `[{"op":"add","path":"/spec/template/spec/priorityClassName","value":"system-cluster-critical"}]`}}}}}}},
		{Name: "post-renderer-strategic", Spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
			Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\nspec:\n  replicas: 9\n"}}}}}}},
		{Name: "post-renderer-images", Spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
			Images: []kustomize.Image{{Name: "registry.example.com/secrets-operator", NewName: "mirror.example.com/eso", NewTag: "0.3.2"}}}}}}},
		{Name: "post-renderers-in-order", Spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{
			{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`}}}},
			{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/replicas","value":3}]`}}}}}}},
		{Name: "post-renderer-bad-patch", Spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
			Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/nope/deeper","value":2}]`}}}}}},
			WantErr: "spec.postRenderers[0].kustomize"},
		{Name: "template-error", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"image":"not-a-map"}`)}, WantErr: "can't evaluate field repository"},
		{Name: "pod-annotations", Spec: helmv2.HelmReleaseSpec{Values: helmValues(`{"podAnnotations":{"e2e.fluxpack.io/gate":"closed"}}`)}},
	}
}

// Release makes the HelmRelease of the case: secrets-operator in
// namespace, where its Sources are too.
func (c ReleaseCase) Release(namespace string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-operator", Namespace: namespace},
		Spec:       *c.Spec.DeepCopy(),
	}
}
