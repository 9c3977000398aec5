package testutil

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"strings"
)

// GenerateManifests writes a deterministic manifest tree of files YAML files
// under dir, spread over layer directories like a platform repository:
// Deployments, Services, ConfigMaps and HelmRelease-like objects of realistic
// sizes, with a large CRD in every 500th file. The same seed gives the same
// bytes. It returns the total size written.
func GenerateManifests(dir string, files int, seed uint64) (int64, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	layers := []string{"namespaces", "crds", "operators", "crs", "infrastructure", "observability", "apps"}
	var total int64
	for i := range files {
		layer := layers[i%len(layers)]
		team := fmt.Sprintf("team-%02d", (i/len(layers))%40)
		name := fmt.Sprintf("%s-%s-%05d", layer, word(r), i)
		var body string
		switch {
		case i%500 == 499:
			body = crd(r, name, 300+r.IntN(500))
		case i%4 == 0:
			body = deployment(r, name, team)
		case i%4 == 1:
			body = service(r, name, team)
		case i%4 == 2:
			body = configMap(r, name, team, 10+r.IntN(40))
		default:
			body = deployment(r, name, team) + "---\n" + service(r, name, team)
		}
		if err := writeFile(dir, path.Join(layer, team, name+".yaml"), body); err != nil {
			return total, err
		}
		total += int64(len(body))
	}
	return total, os.Chmod(dir, 0o755)
}

var words = strings.Fields("alpha bravo cedar delta ember falcon garnet harbor indigo juniper kestrel lumen marble nimbus onyx pine quartz raven sierra tundra umber vega willow xenon yarrow zephyr")

func word(r *rand.Rand) string { return words[r.IntN(len(words))] }

func deployment(r *rand.Rand, name, ns string) string {
	var env strings.Builder
	for range 6 + r.IntN(14) {
		fmt.Fprintf(&env, "            - name: %s_%s\n              value: \"%s-%d\"\n", strings.ToUpper(word(r)), strings.ToUpper(word(r)), word(r), r.IntN(100000))
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/part-of: %[3]s
spec:
  replicas: %[4]d
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
    spec:
      containers:
        - name: app
          image: ghcr.io/acme/%[3]s:v1.%[4]d.%[5]d
          ports:
            - containerPort: %[6]d
          resources:
            requests: {cpu: %[7]dm, memory: %[8]dMi}
          env:
%[9]s`, name, ns, word(r), 1+r.IntN(5), r.IntN(30), 8000+r.IntN(1000), 50+r.IntN(500), 64+r.IntN(512), env.String())
}

func service(r *rand.Rand, name, ns string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  selector:
    app.kubernetes.io/name: %[1]s
  ports:
    - port: 80
      targetPort: %[3]d
`, name, ns, 8000+r.IntN(1000))
}

func configMap(r *rand.Rand, name, ns string, keys int) string {
	var data strings.Builder
	for k := range keys {
		fmt.Fprintf(&data, "  %s_%d: \"%s %s %d\"\n", word(r), k, word(r), word(r), r.Uint32())
	}
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n%s", name, ns, data.String())
}

func crd(r *rand.Rand, name string, props int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]ss.example.com
spec:
  group: example.com
  names: {kind: Thing%[2]d, plural: %[1]ss}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
`, strings.ToLower(name), r.IntN(1000))
	for p := range props {
		fmt.Fprintf(&b, `            %[1]s%[2]d:
              type: object
              description: The %[1]s setting number %[2]d controls how the %[3]s reconciler treats %[4]s resources when they drift.
              properties:
                enabled: {type: boolean}
                mode: {type: string, enum: [%[5]s, %[6]s, %[7]s]}
                limit: {type: integer, minimum: 0, maximum: %[8]d}
`, word(r), p, word(r), word(r), word(r), word(r), word(r), r.IntN(100000))
	}
	return b.String()
}
