package sensitive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/sensitive"
)

func TestFind(t *testing.T) {
	tests := []struct {
		name string
		data string
		want sensitive.Finding
		ok   bool
	}{
		{name: "terraform sensitive", data: "{\n  \"host\": {\"sensitive\": false, \"type\": \"string\", \"value\": \"h\"},\n  \"db-password\": {\"sensitive\": true, \"type\": \"string\", \"value\": \"p\"}\n}\n",
			want: sensitive.Finding{Format: "Terraform/OpenTofu", Output: "db-password", Line: 3}, ok: true},
		{name: "terraform nothing sensitive", data: `{"host": {"sensitive": false, "type": "string", "value": "h"}}`},
		{name: "pulumi placeholder", data: "{\n  \"url\": \"https://x\",\n  \"token\": \"[secret]\"\n}",
			want: sensitive.Finding{Format: "Pulumi", Output: "token", Line: 3}, ok: true},
		{name: "pulumi nested placeholder", data: `{"db": {"pass": "[secret]"}}`,
			want: sensitive.Finding{Format: "Pulumi", Output: "db", Line: 1}, ok: true},
		{name: "word in a value", data: `{"note": {"value": "the \"sensitive\" flag"}}`},
		{name: "not JSON", data: "sensitive: true\n\"sensitive\"\n"},
		{name: "manifest", data: `{"kind": "ConfigMap", "data": {"sensitive": "true"}}`},
		{name: "truncated", data: `{"a": {"sensitive": true, "value": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sensitive.Find([]byte(tt.data))
			assert.Equal(t, tt.ok, ok, "Find(%q)", tt.data)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestInputs(t *testing.T) {
	stack := "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: platform}\nspec:\n  vars:\n    - {name: a, outputs: ./tf/../terraform.json}\n    - {name: b}\n    - {name: c, outputs: /abs/out.json}\n"
	fleet := "apiVersion: fluxpack.dev/v1alpha1\nkind: Fleet\nmetadata: {name: f}\nspec:\n  stack: ./stack.yaml\n  clusters:\n    - {name: prod, outputs: terraform/prod.json}\n"
	assert.Equal(t, []sensitive.Input{
		{Path: "terraform.json", Field: `Stack "platform": spec.vars[0].outputs`, Line: 6},
		{Path: "/abs/out.json", Field: `Stack "platform": spec.vars[2].outputs`, Line: 8},
	}, sensitive.Inputs("stack.yaml", []byte(stack)))
	assert.Equal(t, []sensitive.Input{{Path: "terraform/prod.json", Field: `Fleet "f": spec.clusters[0].outputs`, Line: 10}},
		sensitive.Inputs("fleet.yml", []byte("apiVersion: v1\nkind: ConfigMap\n---\n"+fleet)), "the second document")
	assert.Empty(t, sensitive.Inputs("stack.txt", []byte(stack)), "not a manifest file")
	assert.Empty(t, sensitive.Inputs("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\ndata: {outputs: fluxpack.dev/x}\n")))
}
