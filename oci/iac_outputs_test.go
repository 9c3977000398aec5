package oci_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestBuildRefusesIaCOutputs: a tree holding an IaC outputs file a Stack
// or Fleet of the tree names, or a value an IaC tool marks sensitive, is
// refused with the file and the output's name, never the value, unless
// WithAllowSecrets; Diff checks the same.
func TestBuildRefusesIaCOutputs(t *testing.T) {
	tf := "{\n  \"region\": {\"sensitive\": false, \"type\": \"string\", \"value\": \"eu\"},\n  \"db_password\": {\"sensitive\": true, \"type\": \"string\", \"value\": \"CANARY-hunter2\"}\n}\n"
	plainTF := `{"region": {"sensitive": false, "type": "string", "value": "eu"}}`
	stack := "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: platform}\nspec:\n  vars: [{name: cluster-vars, outputs: terraform.json}]\n  layers: [{name: apps, path: ./apps}]\n"
	outside := "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: platform}\nspec:\n  vars: [{name: cluster-vars, outputs: ../terraform.json}]\n  layers: [{name: apps, path: ./apps}]\n"
	tests := []struct {
		name    string
		files   map[string]string
		opts    []oci.BuildOption
		wantErr error
		path    string
		line    int
		msg     string
	}{
		{name: "terraform sensitive output", files: map[string]string{"apps/cm.yaml": "a: 1\n", "infra/tf.json": tf},
			wantErr: oci.ErrSensitiveOutput, path: "infra/tf.json", line: 3, msg: `Terraform/OpenTofu output "db_password"`},
		{name: "pulumi secret", files: map[string]string{"apps/cm.yaml": "a: 1\n", "pulumi.out": `{"url": "x", "token": "[secret]"}`},
			wantErr: oci.ErrSensitiveOutput, path: "pulumi.out", line: 1, msg: `Pulumi output "token"`},
		{name: "named by the stack, nothing sensitive", files: map[string]string{"apps/cm.yaml": "a: 1\n", "stack.yaml": stack, "terraform.json": plainTF},
			wantErr: oci.ErrOutputsFile, path: "terraform.json", msg: `named by Stack "platform": spec.vars[0].outputs (stack.yaml:5)`},
		{name: "named by a stack in a sub-folder", files: map[string]string{"platform/apps/cm.yaml": "a: 1\n", "platform/stack.yaml": stack, "platform/terraform.json": plainTF},
			wantErr: oci.ErrOutputsFile, path: "platform/terraform.json", msg: `(platform/stack.yaml:5)`},
		{name: "named but outside the tree", files: map[string]string{"apps/cm.yaml": "a: 1\n", "stack.yaml": outside}},
		{name: "stack alone", files: map[string]string{"apps/cm.yaml": "a: 1\n", "stack.yaml": stack}},
		{name: "allowed", files: map[string]string{"stack.yaml": stack, "terraform.json": tf}, opts: []oci.BuildOption{oci.WithAllowSecrets()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, tt.files)
			_, err := oci.Build(dir, tt.opts...)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			var fe *oci.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, filepath.Join(dir, filepath.FromSlash(tt.path)), fe.Path)
			assert.Equal(t, tt.line, fe.Line)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), "CANARY")

			// Diff reads the directory with the same check.
			_, derr := oci.Diff(t.Context(), dir, "oci://127.0.0.1:1/none:v1")
			require.ErrorIs(t, derr, tt.wantErr, "Diff")
		})
	}
}

// TestReadTreeHoldsIaCOutputs: ReadTree reads a tree with IaC outputs (a
// fleet takes its own outputs files out with Without), but Check and
// PushTree refuse it while it still holds them.
func TestReadTreeHoldsIaCOutputs(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"apps/cm.yaml":        "a: 1\n",
		"stack.yaml":          "apiVersion: fluxpack.dev/v1alpha1\nkind: Stack\nmetadata: {name: p}\nspec:\n  vars: [{name: v, outputs: terraform.json}]\n",
		"terraform.json":      `{"region": {"sensitive": false, "type": "string", "value": "eu"}}`,
		"terraform/prod.json": `{"pw": {"sensitive": true, "type": "string", "value": "CANARY"}}`,
	})
	tree, err := oci.ReadTree(dir)
	require.NoError(t, err)
	err = tree.Check()
	require.ErrorIs(t, err, oci.ErrOutputsFile)
	require.ErrorIs(t, err, oci.ErrSensitiveOutput)
	reg := testutil.NewRegistry(t)
	_, err = oci.PushTree(t.Context(), tree, "oci://"+reg.Host+"/p:v1")
	require.ErrorIs(t, err, oci.ErrSensitiveOutput, "PushTree")
	assert.NotContains(t, err.Error(), "CANARY")
	assert.Empty(t, reg.Requests(), "a refused tree sends nothing")

	require.NoError(t, tree.Without("terraform.json", "terraform/prod.json").Check())
	_, err = tree.With("rendered", map[string][]byte{"out.json": []byte(`{"x": {"sensitive": true, "type": "string", "value": "CANARY"}}`)})
	require.ErrorIs(t, err, oci.ErrSensitiveOutput, "With checks the files it adds")

	allowed, err := oci.ReadTree(dir, oci.WithAllowSecrets())
	require.NoError(t, err)
	require.NoError(t, allowed.Check())
}
