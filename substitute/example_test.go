package substitute_test

import (
	"fmt"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/resource"

	"github.com/fluxpack/fluxpack/substitute"
)

// A Substituter applies a Kustomization's postBuild to a resource as
// kustomize-controller does: substituteFrom in order, the inline map wins,
// defaults apply, and a variable without a value fails (strict mode). Note
// replicas: the object is re-serialised before substitution, so the quotes
// around "${replicas:=2}" are gone and the value reads back as the number 2,
// as in Flux (the API server would refuse this ConfigMap).
func ExampleSubstituter() {
	vars := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-vars", Namespace: "flux-system"},
		Data:       map[string]string{"region": "eu-west-1", "bucket": "from-configmap"},
	}
	src, err := substitute.NewSources(vars)
	if err != nil {
		fmt.Println(err)
		return
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{
			Substitute:     map[string]string{"bucket": "inline-wins"},
			SubstituteFrom: []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "cluster-vars"}},
		}},
	}
	res, err := resource.NewFactory(nil).FromBytes([]byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  region: ${region}
  bucket: ${bucket}
  replicas: "${replicas:=2}"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := substitute.NewSubstituter(ks, substitute.WithSources(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.Resource(res); err != nil {
		fmt.Println(err)
		return
	}
	y, _ := res.AsYAML()
	fmt.Print(string(y))

	missing, err := resource.NewFactory(nil).FromBytes([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: shop}\ndata:\n  vpc: ${vpc_id}\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Resource(missing)
	fmt.Println(err)
	// Output:
	// apiVersion: v1
	// data:
	//   bucket: inline-wins
	//   region: eu-west-1
	//   replicas: 2
	// kind: ConfigMap
	// metadata:
	//   name: settings
	//   namespace: shop
	// ConfigMap/shop/other: substituting variables: variable not set (strict mode): "vpc_id"
}

// Check tells, with file:line, what Flux would fail on or retype before the
// manifests reach a cluster.
func ExampleCheck() {
	data := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  vpc: ${vpc_id}\n  zip: ${zip}\n")
	findings := substitute.Check([]substitute.File{{Path: "app.yaml", Data: data}}, substitute.Available{
		Values: map[string]string{"zip": "0123"},
	})
	for _, f := range findings {
		fmt.Println(f)
	}
	// Output:
	// app.yaml:6: ConfigMap/app: error: variable "vpc_id" is not set and has no default: Flux (strict mode) fails the Kustomization
	// app.yaml:7: ConfigMap/app: warning: YAML 1.1 reads the substituted value "0123" as the number 83; if a string is meant, write ${quote}${zip}${quote} with substitute: {quote: '"'}
}
