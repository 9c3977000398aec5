package fluxbuild_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// Build returns what kustomize-controller would apply for a Kustomization
// from a source tree. apps/ has no kustomization.yaml, so Flux generates
// one listing its files, and every object keeps its file and line,
// relative to the source's directory.
func ExampleBuild() {
	dir, err := os.MkdirTemp("", "source")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"apps/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
		"apps/web.yaml": `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: web
spec:
  ports:
    - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
`,
		"apps/README.md": "Not a manifest: Flux's generator leaves it out.\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}

	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec:       kustomizev1.KustomizationSpec{Path: "./apps"},
	}
	objs, err := fluxbuild.Build(context.Background(), fluxbuild.Source{Dir: dir}, ks)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		fmt.Printf("%s:%d: %s\n", o.File, o.Line, o)
	}
	// Output:
	// apps/namespace.yaml:1: Namespace/web
	// apps/web.yaml:1: Service/web/web
	// apps/web.yaml:10: Deployment/web/web
}

// RenderRelease renders what helm-controller would install for a
// HelmRelease from a chart on disk: the chart's CRDs, applied first, then
// the release's objects, each naming the template that made it. Here the
// operator's token comes from a Secret through spec.valuesFrom, and
// WithRedactedSecrets keeps its value out of the output.
func ExampleRenderRelease() {
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-operator", Namespace: "flux-system"},
		Spec: helmv2.HelmReleaseSpec{
			ReleaseName:     "operator",
			TargetNamespace: "external-secrets",
			Values:          &apiextensionsv1.JSON{Raw: []byte(`{"clusterName":"prod"}`)},
			ValuesFrom: []helmv2.ValuesReference{
				{Kind: "Secret", Name: "operator-token", ValuesKey: "token", TargetPath: "token"},
			},
		},
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "operator-token", Namespace: "flux-system"},
		Data:       map[string][]byte{"token": []byte("s3cr3t")},
	}
	rel, err := fluxbuild.RenderRelease(context.Background(), hr, "testdata/charts/secrets-operator",
		fluxbuild.WithValuesFrom(token), fluxbuild.WithRedactedSecrets(), fluxbuild.WithKubeVersion("v1.31.0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("release %s/%s, chart %s\n", rel.Namespace, rel.Name, rel.Chart)
	for _, o := range rel.CRDs {
		fmt.Printf("crd %s (%s:%d)\n", o, o.File, o.Line)
	}
	for _, o := range rel.Objects {
		fmt.Printf("%s (%s)\n", o, o.File)
	}
	for _, line := range strings.Split(string(rel.Manifest), "\n") {
		if strings.Contains(line, "token:") {
			fmt.Println("manifest:", strings.TrimSpace(line))
		}
	}
	// Output:
	// release external-secrets/operator, chart secrets-operator-0.3.1
	// crd CustomResourceDefinition/externalsecrets.external-secrets.io (secrets-operator/crds/externalsecrets.yaml:1)
	// crd CustomResourceDefinition/clustersecretstores.external-secrets.io (secrets-operator/crds/externalsecrets.yaml:22)
	// Secret/external-secrets/operator-secrets-operator-token (secrets-operator/templates/secret.yaml)
	// Deployment/external-secrets/operator-secrets-operator (secrets-operator/templates/deployment.yaml)
	// ValidatingWebhookConfiguration/operator-secrets-operator-validate (secrets-operator/templates/webhook.yaml)
	// manifest: token: REDACTED
}

// WithCache keeps kustomize's builds in a folder: the second Build of the
// same kustomization takes them from there, after checking that every
// file the first one read is as it was. A change to one of them gives
// the new build.
func ExampleWithCache() {
	src, err := os.MkdirTemp("", "source")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(src)
	cache, err := os.MkdirTemp("", "cache")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(cache)
	write := func(name, data string) {
		p := filepath.Join(src, "app", name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(data), 0o644)
	}
	write("kustomization.yaml", "resources: [config.yaml]\nnamePrefix: web-\n")
	write("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n")
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	build := func() {
		objs, err := fluxbuild.Build(context.Background(), fluxbuild.Source{Dir: src}, ks, fluxbuild.WithCache(cache))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, o := range objs {
			var cm struct{ Data map[string]string }
			if err := o.Node.Decode(&cm); err != nil {
				fmt.Println(err)
				return
			}
			fmt.Println(o, o.File, o.Line, "level:", cm.Data["level"])
		}
	}
	build() // kept
	build() // taken from the cache
	write("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: debug\n")
	build() // built again
	// Output:
	// ConfigMap/web-settings app/config.yaml 1 level: info
	// ConfigMap/web-settings app/config.yaml 1 level: info
	// ConfigMap/web-settings app/config.yaml 1 level: debug
}
