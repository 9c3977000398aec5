package outputs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/sensitive"
	"github.com/fluxpack/fluxpack/outputs"
)

// TestSensitiveFindAgreesWithParse holds the light detector push runs on
// every file (internal/sensitive.Find) to this package's reading: for JSON
// outputs files, Find reports an output exactly when Parse reads a
// Terraform output marked sensitive or refuses a Pulumi "[secret]", and
// names the same output.
func TestSensitiveFindAgreesWithParse(t *testing.T) {
	files := map[string][]byte{
		"tf-mixed.json":    []byte(`{"a": {"sensitive": false, "type": "string", "value": "x"}, "b-pw": {"sensitive": true, "type": "string", "value": "y"}}`),
		"tf-plain.json":    []byte(`{"a": {"sensitive": false, "type": "string", "value": "x"}}`),
		"tf-null.json":     []byte(`{"a": {"sensitive": true, "type": "string", "value": null}}`),
		"pulumi-list.json": []byte(`{"a": ["x", "[secret]"]}`),
		"plain-words.json": []byte(`{"sensitive": "[secret] and sensitive"}`),
		"tofu-secret.json": []byte(`{"apiVersion": "v1", "kind": "Secret", "data": {"sensitive": "eA=="}}`),
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "outputs"))
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			data, err := os.ReadFile(filepath.Join("testdata", "outputs", e.Name()))
			require.NoError(t, err)
			files[e.Name()] = data
		}
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			got, ok := sensitive.Find(data)
			outs, err := outputs.Parse(name, data)
			var want []string
			switch {
			case errors.Is(err, outputs.ErrSecretPlaceholder):
				want = []string{"Pulumi"}
			case err == nil && outs.Format == outputs.FormatTerraform:
				for _, o := range outs.List {
					if o.Sensitive {
						want = append(want, o.Name)
					}
				}
			}
			if len(want) == 0 {
				assert.False(t, ok, "Find(%s) = %+v; Parse reads no sensitive output (err %v)", name, got, err)
				return
			}
			require.True(t, ok, "Find(%s) found nothing; Parse: %v %v", name, want, err)
			if want[0] == "Pulumi" {
				assert.Equal(t, "Pulumi", got.Format)
				assert.True(t, bytes.Contains(data, []byte(got.Output)))
				return
			}
			assert.Contains(t, want, got.Output, "Find names an output Parse reads as sensitive")
		})
	}
}
