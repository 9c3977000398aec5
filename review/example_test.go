package review_test

import (
	"fmt"

	"github.com/fluxpack/fluxpack/review"
)

func ExampleDiffObjects() {
	parse := func(y string) []review.Object {
		objs, err := review.ParseObjects("Kustomization/flux-system/apps", []byte(y))
		if err != nil {
			panic(err)
		}
		return objs
	}
	base := parse(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  template:
    spec:
      containers:
        - {name: web, image: "nginx:1.27.3"}
        - {name: proxy, image: "envoy:1.31"}
`)
	head := parse(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  template:
    spec:
      containers:
        - {name: proxy, image: "envoy:1.31"}
        - {name: web, image: "nginx:1.27.4"}
`)
	for _, c := range review.DiffObjects(base, head, review.DefaultStripAttrs) {
		fmt.Println(c.Action, c.ID)
		for _, f := range c.Fields {
			fmt.Printf("  %s %s: %v -> %v\n", f.Op, f.Path, f.Before, f.After)
		}
	}
	for _, im := range review.DiffImages(base, head) {
		fmt.Println(im.Op, im.Image, im.Before, "->", im.After)
	}
	// Output:
	// changed Deployment.apps/apps/web
	//   moved spec.template.spec.containers: [web proxy] -> [proxy web]
	//   changed spec.template.spec.containers[name=web].image: nginx:1.27.3 -> nginx:1.27.4
	// retagged nginx [nginx:1.27.3] -> [nginx:1.27.4]
}
