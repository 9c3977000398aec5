package outputs_test

import (
	"fmt"

	"github.com/fluxpack/fluxpack/outputs"
)

// Terraform outputs become a ConfigMap of the plain values and a Secret of
// the sensitive ones; names Flux rejects are mapped.
func ExampleParse() {
	tf := []byte(`{
  "vpc-id": {"sensitive": false, "type": "string", "value": "vpc-0a1b2c3d"},
  "node_count": {"sensitive": false, "type": "number", "value": 12345678901234567890},
  "subnets": {"sensitive": false, "type": ["list", "string"], "value": ["subnet-a", "subnet-b"]},
  "db_password": {"sensitive": true, "type": "string", "value": "hunter2"}
}`)
	outs, err := outputs.Parse("tf.json", tf)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := outs.Render("cluster-vars", "flux-system", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	y, err := m.YAML() // the Secret is left out
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(y))
	fmt.Println("Secret keys:", len(m.Secret.Data))
	// Output:
	// apiVersion: v1
	// data:
	//   node_count: "12345678901234567890"
	//   subnets: '["subnet-a","subnet-b"]'
	//   vpc_id: vpc-0a1b2c3d
	// kind: ConfigMap
	// metadata:
	//   labels:
	//     app.kubernetes.io/managed-by: fluxpack
	//   name: cluster-vars
	//   namespace: flux-system
	// Secret keys: 1
}
