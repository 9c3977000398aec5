package charts_test

import (
	"context"
	"fmt"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxrepo"
)

// Releases renders every HelmRelease of a tree package fluxrepo read. The
// chart of this one is a folder of the repository itself (its
// GitRepository's path), so no charts folder is needed.
func ExampleReleases() {
	root := "../fluxrepo/testdata/repos/helm-operators"
	repo, err := fluxrepo.Read(context.Background(), root+"/clusters/naive", fluxrepo.WithRoot(root))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer repo.Close()
	finder, err := charts.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	rels, err := charts.Releases(context.Background(), repo.Plan, repo.Inputs, nil, finder)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rels {
		if r.Err != nil {
			fmt.Println(r.Layer, r.Ref, r.Err)
			continue
		}
		fmt.Printf("layer %s: %s installs %d CRDs and %d objects\n", r.Layer, r.Ref, len(r.Release.CRDs), len(r.Release.Objects))
	}
	// Output:
	// layer operator: HelmRelease/flux-system/external-secrets installs 0 CRDs and 2 objects
}
