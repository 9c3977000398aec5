package outputs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/outputs"
)

// listing prints outputs one a line, sensitive values masked, so the golden
// files show names, mapping, encoding and sensitivity at a glance.
func listing(o *outputs.Outputs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\n", o.Format)
	for _, out := range o.List {
		v := out.Value
		if out.Sensitive {
			v = "(sensitive)"
		}
		fmt.Fprintf(&b, "%s <- %q line %d: %s\n", out.Var, out.Name, out.Line, v)
	}
	return b.String()
}

func TestReadOutputsGolden(t *testing.T) {
	tests := []struct {
		file   string
		format outputs.Format
		want   outputs.Format // detected
	}{
		{file: "terraform.json", want: outputs.FormatTerraform},
		{file: "pulumi.json", format: outputs.FormatPulumi, want: outputs.FormatPulumi},
		{file: "pulumi.json", want: outputs.FormatJSON},
		{file: "cloudformation.json", want: outputs.FormatCloudFormation},
		{file: "tofu-controller.yaml", want: outputs.FormatTofuController},
		{file: "plain.env", want: outputs.FormatEnv},
		{file: "plain.yaml", want: outputs.FormatYAML},
		{file: "plain.json", want: outputs.FormatJSON},
	}
	for _, tt := range tests {
		name := strings.ReplaceAll(tt.file, ".", "-")
		if tt.format != "" {
			name += "-as-" + string(tt.format)
		}
		t.Run(name, func(t *testing.T) {
			outs, err := outputs.Read(filepath.Join("testdata", "outputs", tt.file), outputs.WithFormat(tt.format))
			require.NoError(t, err, "Read(%s)", tt.file)
			assert.Equal(t, tt.want, outs.Format, "Read(%s): format", tt.file)
			m, err := outs.Render("cluster-vars", "flux-system", nil)
			require.NoError(t, err)
			y, err := m.SecretYAML()
			require.NoError(t, err)
			testutil.Golden(t, "outputs/"+name, []byte(listing(outs)+"--- manifests ---\n"+string(y)))
		})
	}
}

func TestReadOutputsKeepsMeaning(t *testing.T) {
	outs, err := outputs.Read("testdata/outputs/terraform.json")
	require.NoError(t, err)
	get := func(name string) outputs.Output {
		o, ok := outs.Lookup(name)
		require.True(t, ok, "output %q", name)
		return o
	}
	assert.Equal(t, "vpc_id", get("vpc-id").Var, "dashes map to underscores")
	assert.Equal(t, "_1st_subnet", get("1st_subnet").Var, "a leading digit gets an underscore")
	assert.Equal(t, "123456789012345678901234567890", get("account_id").Value, "big numbers stay exact")
	assert.Equal(t, "0.25", get("spot_ratio").Value)
	assert.Equal(t, `["subnet-0aa","subnet-0bb","subnet-0cc"]`, get("private_subnets").Value, "lists are compact JSON")
	assert.True(t, get("db_password").Sensitive)
	assert.NotContains(t, get("ca_bundle").Value, "\n", "a multi-line value must survive Flux's newline stripping")

	m, err := outs.Render("cluster-vars", "flux-system", nil)
	require.NoError(t, err)
	assert.NotContains(t, m.ConfigMap.Data, "db_password", "a sensitive output landed in the ConfigMap")
	require.NotNil(t, m.Secret)
	assert.Equal(t, "hunter2-s3cr3t", string(m.Secret.Data["db_password"]))
	y, err := m.YAML()
	require.NoError(t, err)
	assert.NotContains(t, string(y), "aHVudGVyMi1zM2NyM3Q", "YAML(false) printed the Secret")
	assert.NotContains(t, string(y), "kind: Secret")
}

func TestRename(t *testing.T) {
	outs, err := outputs.Read("testdata/outputs/terraform.json", outputs.WithRename(map[string]string{"vpc-id": "vpc", "1st_subnet": "first_subnet"}))
	require.NoError(t, err)
	o, ok := outs.Lookup("vpc-id")
	require.True(t, ok)
	assert.Equal(t, "vpc", o.Var)

	_, err = outputs.Read("testdata/outputs/terraform.json", outputs.WithRename(map[string]string{"nope": "x"}))
	assert.ErrorIs(t, err, outputs.ErrMissingOutput, "renaming an output the file lacks")
	_, err = outputs.Read("testdata/outputs/terraform.json", outputs.WithRename(map[string]string{"vpc-id": "bad-name"}))
	assert.ErrorIs(t, err, outputs.ErrInvalidName, "renaming to an invalid name")
	_, err = outputs.Read("testdata/outputs/terraform.json", outputs.WithRename(map[string]string{"vpc-id": "node_count"}))
	assert.ErrorIs(t, err, outputs.ErrDuplicateName, "renaming onto another output's name")
}

func TestValuesMap(t *testing.T) {
	outs, err := outputs.Read("testdata/outputs/terraform.json")
	require.NoError(t, err)
	vm, err := outputs.ReadValuesMap("testdata/outputs/values-map.yaml")
	require.NoError(t, err)
	m, err := outs.Render("cluster-vars", "flux-system", vm)
	require.NoError(t, err)
	y, err := m.YAML()
	require.NoError(t, err)
	testutil.Golden(t, "outputs/values-map", y)
	require.Len(t, m.Values, 2)
	assert.Contains(t, m.Values[0].Data["values.yaml"], "replicas: 3\n", "numbers keep their type in values")
}

// TestBadInput: every kind of bad input is a named error that names the
// file, and never shows a value.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, file, data string
		format           outputs.Format
		renames          map[string]string
		want             error
		line             int
	}{
		{name: "malformed json", file: "o.json", data: "{\"a\": {\"value\": \"hunter2\",\n", want: outputs.ErrMalformed, line: 2},
		{name: "malformed json syntax", file: "o.json", data: "{\"a\": 1,\n \"b\": hunter2}\n", want: outputs.ErrMalformed, line: 2},
		{name: "trailing data", file: "o.json", data: "{\"a\": 1}\n{\"b\": 2}\n", want: outputs.ErrMalformed, line: 2},
		{name: "json top level list", file: "o.json", data: "[1, 2]\n", format: outputs.FormatJSON, want: outputs.ErrWrongShape},
		{name: "terraform wrong shape", file: "o.json", data: "{\"a\": {\"sensitive\": false, \"type\": \"string\", \"value\": \"x\"},\n\"b\": \"hunter2\"}\n", format: outputs.FormatTerraform, want: outputs.ErrWrongShape, line: 2},
		{name: "cloudformation wrong shape", file: "o.json", data: "{\"Stacks\": {\"Outputs\": []}}\n", format: outputs.FormatCloudFormation, want: outputs.ErrWrongShape},
		{name: "cloudformation missing key", file: "o.json", data: "{\"Stacks\": [{\"Outputs\": [{\"OutputValue\": \"hunter2\"}]}]}\n", want: outputs.ErrWrongShape},
		{name: "duplicate after mapping", file: "o.json", data: "{\"vpc-id\": \"a\",\n\"vpc_id\": \"b\"}\n", want: outputs.ErrDuplicateName, line: 2},
		{name: "duplicate key", file: "o.json", data: "{\"a\": \"hunter2\",\n\"a\": \"b\"}\n", want: outputs.ErrMalformed, line: 2},
		{name: "duplicate yaml key", file: "o.yaml", data: "a: hunter2\na: b\n", want: outputs.ErrMalformed, line: 2},
		{name: "pulumi secret placeholder", file: "o.json", data: "{\"a\": \"x\",\n\"pw\": \"[secret]\"}\n", format: outputs.FormatPulumi, want: outputs.ErrSecretPlaceholder, line: 2},
		{name: "detected secret placeholder", file: "o.json", data: "{\"pw\": [\"[secret]\"]}\n", want: outputs.ErrSecretPlaceholder, line: 1},
		{name: "env bad line", file: "o.env", data: "A=1\nhunter2\n", want: outputs.ErrMalformed, line: 2},
		{name: "env unterminated quote", file: "o.env", data: "A=\"hunter2\n", want: outputs.ErrMalformed, line: 1},
		{name: "yaml not a map", file: "o.yaml", data: "- a\n- b\n", format: outputs.FormatYAML, want: outputs.ErrWrongShape, line: 1},
		{name: "yaml syntax", file: "o.yaml", data: "a: b\n  c: [hunter2\n", format: outputs.FormatYAML, want: outputs.ErrMalformed},
		{name: "tofu secret bad base64", file: "s.yaml", data: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: '!!!hunter2'}\n", want: outputs.ErrMalformed},
		{name: "unknown format option", file: "o.json", data: "{}", format: "hcl", want: outputs.ErrUnknownFormat},
		{name: "empty name", file: "o.json", data: "{\"\": \"hunter2\"}", want: outputs.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := outputs.Parse(tt.file, []byte(tt.data), outputs.WithFormat(tt.format), outputs.WithRename(tt.renames))
			require.Error(t, err, "Parse(%q)", tt.data)
			assert.ErrorIs(t, err, tt.want, "Parse(%q): %v", tt.data, err)
			assert.NotContains(t, err.Error(), "hunter2", "the error shows a value")
			var fe *outputs.FileError
			if errors.As(err, &fe) {
				assert.Equal(t, tt.file, fe.Path)
				if tt.line > 0 {
					assert.Equal(t, tt.line, fe.Line, "line of %v", err)
				}
			} else if !errors.Is(err, outputs.ErrInvalidOption) {
				t.Errorf("Parse(%q): want a *FileError, got %v", tt.data, err)
			}
		})
	}
}

func TestValuesMapErrors(t *testing.T) {
	outs, err := outputs.Read("testdata/outputs/terraform.json")
	require.NoError(t, err)
	tests := []struct {
		name, data string
		want       error
		line       int
	}{
		{name: "missing output", data: "configMaps:\n  - name: v\n    values:\n      a.b: nope\n", want: outputs.ErrMissingOutput, line: 4},
		{name: "sensitive output", data: "configMaps:\n  - name: v\n    values:\n      db.password: db_password\n", want: outputs.ErrSensitiveValue, line: 4},
		{name: "path twice", data: "configMaps:\n  - name: v\n    values:\n      a: vpc_id\n      a.b: vpc_id\n", want: outputs.ErrDuplicateName, line: 5},
		{name: "unknown field", data: "configmaps: []\n", want: outputs.ErrWrongShape, line: 1},
		{name: "bad name", data: "configMaps:\n  - name: Bad_Name\n    values: {a: vpc_id}\n", want: outputs.ErrWrongShape, line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm, err := outputs.ParseValuesMap("vm.yaml", []byte(tt.data))
			if err == nil {
				_, err = outs.Render("cluster-vars", "flux-system", vm)
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want, "%v", err)
			var fe *outputs.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.line, fe.Line, "line of %v", err)
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
}

func TestWriteDir(t *testing.T) {
	outs, err := outputs.Read("testdata/outputs/terraform.json")
	require.NoError(t, err)
	m, err := outs.Render("cluster-vars", "flux-system", nil)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := m.WriteDir(dir)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "WriteDir left a temporary directory behind")
	st, err := os.Stat(filepath.Join(dir, "secret-cluster-vars.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the Secret file must be private")
}
