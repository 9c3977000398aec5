package fluxrepo_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

// Read follows the tree from its entry point: flux bootstrap's
// flux-system applies clusters/naive, whose Kustomizations apply the
// folders of infrastructure/, each a layer with the file and line that
// declares it and the objects it applies.
func ExampleRead() {
	root := "testdata/repos/helm-operators"
	repo, err := fluxrepo.Read(context.Background(), root+"/clusters/naive", fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	for i, l := range repo.Plan.Layers {
		fmt.Printf("%s:%d: %s dependsOn=%v objects=%d\n", l.File, l.Line, l.Name, l.DependsOn, len(repo.Inputs[i].Objects))
	}
	// Output:
	// clusters/naive/flux-system/gotk-sync.yaml:12: flux-system dependsOn=[] objects=6
	// clusters/naive/infrastructure.yaml:1: namespaces dependsOn=[] objects=1
	// clusters/naive/infrastructure.yaml:12: crds dependsOn=[namespaces] objects=2
	// clusters/naive/infrastructure.yaml:27: operator dependsOn=[namespaces] objects=2
	// clusters/naive/infrastructure.yaml:42: crs dependsOn=[crds] objects=1
}

// Views say where each layer's source holds the repository's files: here
// an ArtifactGenerator copies platform/infra/** to the root of the infra
// artifact (leaving its Markdown out), which the infra and monitoring
// layers read at ./controllers and ./monitoring.
func ExampleView_Paths() {
	root := "testdata/repos/artifact-generator"
	repo, err := fluxrepo.Read(context.Background(), root+"/clusters/prod", fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	for i, l := range repo.Plan.Layers {
		v := repo.Views[i]
		for _, file := range []string{"platform/infra/controllers/ingress.yaml", "platform/infra/README.md"} {
			for _, p := range v.Paths(file) {
				rel, _ := filepath.Rel(v.Dir, p)
				fmt.Printf("%s: %s at %s\n", l.Name, file, filepath.ToSlash(rel))
			}
		}
	}
	// Output:
	// flux-system: platform/infra/controllers/ingress.yaml at platform/infra/controllers/ingress.yaml
	// flux-system: platform/infra/README.md at platform/infra/README.md
	// infra: platform/infra/controllers/ingress.yaml at controllers/ingress.yaml
	// monitoring: platform/infra/controllers/ingress.yaml at controllers/ingress.yaml
}
