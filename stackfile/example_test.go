package stackfile_test

import (
	"fmt"

	"github.com/fluxpack/fluxpack/stackfile"
)

// A stack file read into a Builder, built, and written back.
func ExampleParse() {
	b, err := stackfile.Parse("stack.yaml", []byte(`apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata: {name: platform}
spec:
  source: {url: oci://registry.example.com/platform, tag: v1}
  layers:
    - name: crds
    - name: operator
      dependsOn: [crds]
      wait: true
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range plan.Layers {
		fmt.Printf("%s:%d %s %v\n", l.File, l.Line, l.Name, l.DependsOn)
	}
	data, err := stackfile.Marshal(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(data))
	// Output:
	// stack.yaml:7 crds []
	// stack.yaml:8 operator [crds]
	// apiVersion: fluxpack.dev/v1alpha1
	// kind: Stack
	// metadata:
	//   name: platform
	// spec:
	//   source:
	//     url: oci://registry.example.com/platform
	//     tag: v1
	//   layers:
	//     - name: crds
	//     - name: operator
	//       dependsOn:
	//         - name: crds
	//       wait: true
}

// Every problem of a stack file at once, each at its line.
func ExampleParse_errors() {
	_, err := stackfile.Parse("stack.yaml", []byte(`apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata: {name: platform}
spec:
  source: {url: oci://registry.example.com/platform}
  layers:
    - name: crds
      pruen: false
      interval: soon
`))
	fmt.Println(err)
	// Output:
	// invalid stack file: stack.yaml:8: unknown field "pruen" in spec.layers[0] (known: commonMetadata, components, decryption, deletionPolicy, dependsOn, dependsOnOperator, force, healthCheckExprs, healthChecks, helmRelease, images, interval, name, namePrefix, nameSuffix, operator, patches, path, postBuild, prune, retryInterval, serviceAccountName, sourceRef, suspend, targetNamespace, timeout, wait, webhookGuard)
	// stack.yaml:9: spec.layers[0].interval: invalid duration "soon": want a positive duration such as 10m
}
