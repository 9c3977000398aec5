package fluxbuild_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

var operatorChart = filepath.Join("testdata", "charts", "secrets-operator")

// releaseCase is one HelmRelease rendered from the test chart with the
// ConfigMaps and Secrets the cluster holds.
type releaseCase struct {
	name    string
	spec    helmv2.HelmReleaseSpec
	sources []runtime.Object
	wantErr string
}

func values(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"}, Data: data}
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// releaseCases cover the values merge (chart defaults, valuesFrom in
// order, inline values, targetPath, optional references, Secrets), the
// CRD policies, the release's name and namespace, and the post-renderers.
var releaseCases = []releaseCase{
	{name: "defaults"},
	{name: "inline-values", spec: helmv2.HelmReleaseSpec{Values: values(`{"replicaCount":3,"clusterName":"inline"}`)}},
	{name: "values-from-configmap", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
		sources: []runtime.Object{configMap("vals", map[string]string{"values.yaml": "clusterName: from-configmap\nreplicaCount: 2\n"})}},
	{name: "values-from-key", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals", ValuesKey: "prod.yaml"}}},
		sources: []runtime.Object{configMap("vals", map[string]string{"prod.yaml": "clusterName: prod\n"})}},
	{name: "values-from-order", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
		{Kind: "ConfigMap", Name: "first"}, {Kind: "ConfigMap", Name: "second"}}},
		sources: []runtime.Object{
			configMap("first", map[string]string{"values.yaml": "clusterName: first\nreplicaCount: 5\n"}),
			configMap("second", map[string]string{"values.yaml": "clusterName: second\n"})}},
	{name: "inline-wins", spec: helmv2.HelmReleaseSpec{Values: values(`{"clusterName":"inline"}`),
		ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
		sources: []runtime.Object{configMap("vals", map[string]string{"values.yaml": "clusterName: from-configmap\nreplicaCount: 4\n"})}},
	{name: "target-path", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
		{Kind: "ConfigMap", Name: "vars", ValuesKey: "cluster_name", TargetPath: "clusterName"}}},
		sources: []runtime.Object{configMap("vars", map[string]string{"cluster_name": "mycluster-0"})}},
	{name: "target-path-wins-over-inline", spec: helmv2.HelmReleaseSpec{Values: values(`{"clusterName":"inline"}`),
		ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vars", ValuesKey: "cluster_name", TargetPath: "clusterName"}}},
		sources: []runtime.Object{configMap("vars", map[string]string{"cluster_name": "from-target-path"})}},
	{name: "target-path-number", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
		{Kind: "ConfigMap", Name: "vars", ValuesKey: "replicas", TargetPath: "replicaCount"}}},
		sources: []runtime.Object{configMap("vars", map[string]string{"replicas": "7"})}},
	{name: "target-path-literal", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{
		{Kind: "ConfigMap", Name: "vars", ValuesKey: "v", TargetPath: "clusterName", Literal: true}}},
		sources: []runtime.Object{configMap("vars", map[string]string{"v": "a,b=c"})}},
	{name: "secret-values", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "token", ValuesKey: "token", TargetPath: "token"}}},
		sources: []runtime.Object{secret("token", map[string]string{"token": "s3cr3t"})}},
	{name: "secret-values-yaml", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "vals"}}},
		sources: []runtime.Object{secret("vals", map[string]string{"values.yaml": "token: from-secret\n"})}},
	{name: "optional-missing", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "absent", Optional: true}}}},
	{name: "optional-missing-key", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals", ValuesKey: "nope", Optional: true}}},
		sources: []runtime.Object{configMap("vals", map[string]string{"values.yaml": "clusterName: x\n"})}},
	{name: "missing", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "absent"}}},
		wantErr: `ConfigMap chart values reference 'flux-system/absent' with key 'values.yaml': configmaps "absent" not found`},
	{name: "missing-key", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "Secret", Name: "vals", ValuesKey: "nope"}}},
		sources: []runtime.Object{secret("vals", map[string]string{"values.yaml": "a: b\n"})}, wantErr: "reference 'flux-system/vals' with key 'nope': key not found"},
	{name: "values-not-yaml", spec: helmv2.HelmReleaseSpec{ValuesFrom: []meta.ValuesReference{{Kind: "ConfigMap", Name: "vals"}}},
		sources: []runtime.Object{configMap("vals", map[string]string{"values.yaml": "a: [b\n"})}, wantErr: "error converting YAML to JSON"},
	{name: "crds-skip", spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: helmv2.Skip}}},
	{name: "crds-create-replace", spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: helmv2.CreateReplace}}},
	{name: "crds-invalid", spec: helmv2.HelmReleaseSpec{Install: &helmv2.Install{CRDs: "Sometimes"}}, wantErr: `spec.install.crds "Sometimes"`},
	{name: "release-name", spec: helmv2.HelmReleaseSpec{ReleaseName: "eso"}},
	{name: "target-namespace", spec: helmv2.HelmReleaseSpec{TargetNamespace: "external-secrets"}},
	{name: "long-name", spec: helmv2.HelmReleaseSpec{TargetNamespace: "a-very-long-target-namespace-name-for-tenants"}},
	{name: "webhook-disabled", spec: helmv2.HelmReleaseSpec{Values: values(`{"webhook":{"enabled":false}}`)}},
	{name: "common-metadata", spec: helmv2.HelmReleaseSpec{CommonMetadata: &helmv2.CommonMetadata{
		Labels: map[string]string{"team": "platform", "helm.toolkit.fluxcd.io/name": "overridden"}, Annotations: map[string]string{"owner": "sre"}}}},
	{name: "post-renderer-patch", spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"},
			Patch: `[{"op":"add","path":"/spec/template/spec/priorityClassName","value":"system-cluster-critical"}]`}}}}}}},
	{name: "post-renderer-strategic", spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Patches: []kustomize.Patch{{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: secrets-operator\n  namespace: flux-system\nspec:\n  replicas: 9\n"}}}}}}},
	{name: "post-renderer-images", spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Images: []kustomize.Image{{Name: "registry.example.com/secrets-operator", NewName: "mirror.example.com/eso", NewTag: "0.3.2"}}}}}}},
	{name: "post-renderers-in-order", spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{
		{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`}}}},
		{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/replicas","value":3}]`}}}}}}},
	{name: "post-renderer-bad-patch", spec: helmv2.HelmReleaseSpec{PostRenderers: []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{
		Patches: []kustomize.Patch{{Target: &kustomize.Selector{Kind: "Deployment"}, Patch: `[{"op":"replace","path":"/spec/nope/deeper","value":2}]`}}}}}},
		wantErr: "spec.postRenderers[0].kustomize"},
	{name: "template-error", spec: helmv2.HelmReleaseSpec{Values: values(`{"image":"not-a-map"}`)}},
	{name: "pod-annotations", spec: helmv2.HelmReleaseSpec{Values: values(`{"podAnnotations":{"e2e.fluxpack.io/gate":"closed"}}`)}},
}

// release makes the HelmRelease of a case: flux-system/secrets-operator.
func (c releaseCase) release() *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-operator", Namespace: "flux-system"},
		Spec:       c.spec,
	}
}

// renderSummary prints what a render gave: the release, the CRDs and
// the manifest, each object with the template it came from.
func renderSummary(rel *fluxbuild.Release) string {
	var b strings.Builder
	fmt.Fprintf(&b, "release %s/%s chart %s\n", rel.Namespace, rel.Name, rel.Chart)
	for _, o := range rel.CRDs {
		fmt.Fprintf(&b, "crd %s (%s:%d)\n", o, o.File, o.Line)
	}
	for _, o := range rel.Objects {
		fmt.Fprintf(&b, "object %s (%s)\n", o, o.File)
	}
	b.WriteString("---\n")
	b.Write(rel.Manifest)
	return b.String()
}

func TestRenderRelease(t *testing.T) {
	for _, tc := range releaseCases {
		t.Run(tc.name, func(t *testing.T) {
			rel, err := fluxbuild.RenderRelease(t.Context(), tc.release(), operatorChart, fluxbuild.WithValuesFrom(tc.sources...))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr, "RenderRelease of case %s", tc.name)
				require.ErrorContains(t, err, "HelmRelease/flux-system/secrets-operator")
				return
			}
			if tc.name == "template-error" {
				require.Error(t, err)
				testutil.Golden(t, "release-"+tc.name, []byte(err.Error()+"\n"))
				return
			}
			require.NoError(t, err, "RenderRelease of case %s", tc.name)
			testutil.Golden(t, "release-"+tc.name, []byte(renderSummary(rel)))
		})
	}
}

func TestRenderReleaseBadInput(t *testing.T) {
	hr := releaseCase{}.release()
	_, err := fluxbuild.RenderRelease(t.Context(), hr, filepath.Join("testdata", "charts", "absent"))
	require.ErrorIs(t, err, fluxbuild.ErrChartNotFound)
	require.ErrorContains(t, err, "HelmRelease/flux-system/secrets-operator")
	_, err = fluxbuild.RenderRelease(t.Context(), hr, operatorChart, fluxbuild.WithKubeVersion("not-a-version"))
	require.ErrorIs(t, err, fluxbuild.ErrInvalidOption)
	_, err = fluxbuild.RenderRelease(t.Context(), hr, operatorChart, fluxbuild.WithValuesFrom(&corev1.Pod{}))
	require.ErrorIs(t, err, fluxbuild.ErrInvalidOption)
}

var _ = sigyaml.Marshal

// Values from Secrets never reach the templates with WithRedactedSecrets:
// a whole value (targetPath) and each leaf of a values document print as
// REDACTED; ConfigMap values print as they are.
func TestRenderReleaseRedactsSecrets(t *testing.T) {
	for _, name := range []string{"secret-values", "secret-values-yaml"} {
		i := slices.IndexFunc(releaseCases, func(c releaseCase) bool { return c.name == name })
		require.GreaterOrEqual(t, i, 0)
		tc := releaseCases[i]
		rel, err := fluxbuild.RenderRelease(t.Context(), tc.release(), operatorChart, fluxbuild.WithValuesFrom(tc.sources...), fluxbuild.WithRedactedSecrets())
		require.NoError(t, err, "RenderRelease of case %s, redacted", name)
		require.Contains(t, string(rel.Manifest), "token: REDACTED")
		require.NotContains(t, string(rel.Manifest), "s3cr3t")
		require.NotContains(t, string(rel.Manifest), "from-secret")
	}
}
