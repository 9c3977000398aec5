package testutil

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/layering"
)

// GenerateStack writes a platform of layers layers holding objects objects
// in total under dir, and returns the stack as a Builder: a namespaces
// layer, a CRDs layer (prune: false), then layers that each depend on one to
// three earlier ones and hold Deployments, Services, ConfigMaps and custom
// resources, five objects per file; every 20th layer has a
// kustomization.yaml (namePrefix), so kustomize builds it. Every layer
// substitutes ${cluster_name} (inline), so the variables rule reads every
// object. The stack lints
// clean. The same arguments give the same files.
func GenerateStack(dir string, layers, objects int, seed uint64) (*layering.Builder, error) {
	if layers < 3 {
		return nil, fmt.Errorf("want at least 3 layers, got %d", layers)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const teams, kinds = 40, 20
	var ns strings.Builder
	for i := range teams {
		fmt.Fprintf(&ns, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-%02d\n", i)
	}
	if err := writeFile(dir, "namespaces/namespaces.yaml", ns.String()); err != nil {
		return nil, err
	}
	var crds strings.Builder
	for k := range kinds {
		fmt.Fprintf(&crds, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: thing%[1]ds.example.com
spec:
  group: example.com
  names: {kind: Thing%[1]d, plural: thing%[1]ds}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`, k)
	}
	if err := writeFile(dir, "crds/crds.yaml", crds.String()); err != nil {
		return nil, err
	}
	b := layering.New("generated", layering.FromOCI("oci://registry.example.com/generated", "v1")).
		Layer("namespaces", layering.Path("./namespaces")).
		Then("crds", layering.Path("./crds"), layering.KeepOnDelete())
	names := []string{"namespaces", "crds"}
	perLayer := objects / (layers - 2)
	extra := objects % (layers - 2)
	for i := 2; i < layers; i++ {
		name := fmt.Sprintf("layer-%04d", i)
		n := perLayer
		if i-2 < extra {
			n++
		}
		var file strings.Builder
		var files []string
		for o := range n {
			team := fmt.Sprintf("team-%02d", r.IntN(teams))
			oname := fmt.Sprintf("%s-%s-%d", name, word(r), o)
			switch o % 4 {
			case 0:
				fmt.Fprintf(&file, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/%s:v1.%d\n          ports: [{containerPort: 8080}]\n", oname, team, oname, 1+r.IntN(3), oname, oname, word(r), r.IntN(50))
			case 1:
				fmt.Fprintf(&file, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: 8080}]\n", oname, team, oname)
			case 2:
				fmt.Fprintf(&file, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  mode: %s\n  level: \"%d\"\n  owner: %s\n  cluster: ${cluster_name}\n", oname, team, word(r), r.IntN(10), word(r))
			default:
				fmt.Fprintf(&file, "---\napiVersion: example.com/v1\nkind: Thing%d\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  size: %d\n  color: %s\n", r.IntN(kinds), oname, team, r.IntN(100), word(r))
			}
			if o%5 == 4 || o == n-1 {
				f := fmt.Sprintf("%s/objects-%03d.yaml", name, o/5)
				if err := writeFile(dir, f, file.String()); err != nil {
					return nil, err
				}
				files = append(files, filepath.Base(f))
				file.Reset()
			}
		}
		if (i-2)%20 == 0 { // one layer in 20 has its own kustomization, at every size
			k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: k-\nresources:\n"
			for _, f := range files {
				k += "  - " + f + "\n"
			}
			if err := writeFile(dir, name+"/kustomization.yaml", k); err != nil {
				return nil, err
			}
		}
		deps := []string{names[len(names)-1]}
		for range r.IntN(3) {
			if len(names) <= 2 {
				break
			}
			if d := names[2+r.IntN(len(names)-2)]; !contains(deps, d) {
				deps = append(deps, d)
			}
		}
		b.Layer(name, layering.Path("./"+name), layering.DependsOn(deps...), layering.Substitute(map[string]string{"cluster_name": "c1"}))
		names = append(names, name)
	}
	return b, os.Chmod(dir, 0o755)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// GenerateRepository writes GenerateStack's tree and, beside it, the same
// platform as a Flux repository would hold it: clusters/bench/ with flux
// bootstrap's GitRepository and Kustomization flux-system and one file per
// layer holding its Kustomization (sourceRef GitRepository flux-system).
// It returns the stack too, whose layers read the same objects, and the
// entry point.
func GenerateRepository(dir string, layers, objects int, seed uint64) (*layering.Builder, string, error) {
	b, err := GenerateStack(dir, layers, objects, seed)
	if err != nil {
		return nil, "", err
	}
	plan, err := b.Build()
	if err != nil {
		return nil, "", err
	}
	entry := filepath.Join(dir, "clusters", "bench")
	if err := os.MkdirAll(filepath.Join(entry, "flux-system"), 0o755); err != nil {
		return nil, "", err
	}
	sync := `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: "https://example.com/bench.git", ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 10m, path: ./clusters/bench, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`
	if err := os.WriteFile(filepath.Join(entry, "flux-system", "gotk-sync.yaml"), []byte(sync), 0o644); err != nil {
		return nil, "", err
	}
	for _, l := range plan.Layers {
		k := l.Kustomization.DeepCopy()
		k.Spec.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}
		data, err := sigyaml.Marshal(k)
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(entry, l.Name+".yaml"), data, 0o644); err != nil {
			return nil, "", err
		}
	}
	return b, entry, nil
}
