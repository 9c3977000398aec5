package testutil

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
)

// GenerateFleet writes a fleet of clusters clusters running one stack of
// layers layers under dir, and returns the fleet file's path:
//
//	dir/fleet.yaml              the fleet (artifact: the given template)
//	dir/terraform/<c>.json      each cluster's IaC outputs (one sensitive)
//	dir/stack/stack.yaml        the stack: vars from the outputs, a chain of layers
//	dir/stack/<layer>/*.yaml    three files of a few objects per layer
//
// The fleet file and the outputs lie outside the stack's folder, so other
// fleet files written beside fleet.yaml (say with another artifact
// template) are not part of any artifact. Every tenth cluster turns its
// last layer off and every seventh sets an extra variable, as real fleets
// differ a little. artifact is the fleet's URL template (with
// {{cluster}}). The same arguments give the same files.
func GenerateFleet(dir string, clusters, layers int, artifact string, seed uint64) (string, error) {
	if layers < 2 || clusters < 1 {
		return "", fmt.Errorf("want at least 2 layers and 1 cluster, got %d and %d", layers, clusters)
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var stack strings.Builder
	stack.WriteString(`apiVersion: fluxpack.dev/v1alpha1
kind: Stack
metadata: {name: generated, namespace: flux-system}
spec:
  source: {url: oci://registry.example.com/generated, tag: latest}
  vars: [{outputs: terraform/default.json, name: cluster-vars}]
  layers:
`)
	names := make([]string, layers)
	for i := range layers {
		name := fmt.Sprintf("layer-%02d", i)
		names[i] = name
		if i == 0 {
			fmt.Fprintf(&stack, "    - {name: %s, path: ./%s}\n", name, name)
		} else {
			fmt.Fprintf(&stack, "    - {name: %s, path: ./%s, dependsOn: [%s]}\n", name, name, names[i-1])
		}
		for f := range 3 {
			var body strings.Builder
			for o := range 3 {
				oname := fmt.Sprintf("%s-%s-%d-%d", name, word(r), f, o)
				if i == 0 && f == 0 {
					fmt.Fprintf(&body, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-%02d\n", o)
					continue
				}
				ns := fmt.Sprintf("team-%02d", r.IntN(3))
				if o%2 == 0 {
					fmt.Fprintf(&body, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  mode: %s\n  cluster: ${cluster_name}\n  region: ${region}\n", oname, ns, word(r))
				} else {
					fmt.Fprintf(&body, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      containers:\n        - name: app\n          image: ghcr.io/acme/%s:v1.%d\n          env: [{name: CLUSTER, value: \"${cluster_name}\"}]\n", oname, ns, oname, 1+r.IntN(3), oname, oname, word(r), r.IntN(50))
				}
			}
			if err := writeFile(dir, fmt.Sprintf("stack/%s/objects-%d.yaml", name, f), body.String()); err != nil {
				return "", err
			}
		}
	}
	if err := writeFile(dir, "stack/stack.yaml", stack.String()); err != nil {
		return "", err
	}
	outputs := func(cluster string) string {
		return fmt.Sprintf(`{
  "cluster_name": {"sensitive": false, "type": "string", "value": %q},
  "region": {"sensitive": false, "type": "string", "value": "region-%d"},
  "db_password": {"sensitive": true, "type": "string", "value": "s3cr3t-%s"}
}
`, cluster, r.IntN(8), cluster)
	}
	if err := writeFile(dir, "stack/terraform/default.json", outputs("default")); err != nil {
		return "", err
	}
	var fleet strings.Builder
	fmt.Fprintf(&fleet, "apiVersion: fluxpack.dev/v1alpha1\nkind: Fleet\nmetadata: {name: generated}\nspec:\n  stack: ./stack/stack.yaml\n  artifact: %s\n  clusters:\n", artifact)
	for c := range clusters {
		name := fmt.Sprintf("cluster-%04d", c)
		if err := writeFile(dir, "terraform/"+name+".json", outputs(name)); err != nil {
			return "", err
		}
		fmt.Fprintf(&fleet, "    - name: %s\n      outputs: terraform/%s.json\n", name, name)
		if c%10 == 9 {
			fmt.Fprintf(&fleet, "      disable: [%s]\n", names[layers-1])
		}
		if c%7 == 6 {
			fmt.Fprintf(&fleet, "      substitute: {tier: t%d}\n", c%3)
		}
	}
	file := filepath.Join(dir, "fleet.yaml")
	if err := writeFile(dir, "fleet.yaml", fleet.String()); err != nil {
		return "", err
	}
	return file, nil
}
