package outputs_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/substitute"
)

// FuzzParseOutputs feeds arbitrary bytes to every IaC reader (and to format
// detection, under each file name it looks at). None may panic; a refusal
// is a *FileError wrapping one of the package's sentinels; what is accepted
// has unique, valid Flux variable names, renders, and keeps every sensitive
// output out of the ConfigMap.
func FuzzParseOutputs(f *testing.F) {
	samples, _ := filepath.Glob(filepath.Join("testdata", "outputs", "*"))
	for _, p := range samples {
		if strings.HasSuffix(p, ".golden") {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	f.Add([]byte(`{"a": {"sensitive": true, "type": "string", "value": "pw"}}`), uint8(1))
	f.Add([]byte("A=1\nexport B='x'\nC=\"y\\n\"\n"), uint8(6))
	f.Add([]byte(`{"Stacks": [{"Outputs": [{"OutputKey": "K", "OutputValue": "V"}]}]}`), uint8(3))
	f.Add([]byte("a: [1, {b: c}]\n"), uint8(7))
	formats := append([]outputs.Format{outputs.FormatAuto}, outputs.Formats()...)
	names := []string{"outputs.json", "outputs.env", "outputs.yaml", "secret.yaml"}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		format := formats[int(pick)%len(formats)]
		name := names[int(pick/16)%len(names)]
		outs, err := outputs.Parse(name, data, outputs.WithFormat(format))
		if err != nil {
			var fe *outputs.FileError
			if !errors.As(err, &fe) || fe.Path != name {
				t.Fatalf("%s as %q: %v is not a *FileError naming the file", name, format, err)
			}
			if !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) {
				t.Fatalf("%s as %q: %v wraps no sentinel", name, format, err)
			}
			return
		}
		seen := map[string]bool{}
		for i, out := range outs.List {
			if !substitute.ValidVarName(out.Var) {
				t.Fatalf("output %q: variable %q is not valid for Flux", out.Name, out.Var)
			}
			if seen[out.Var] {
				t.Fatalf("variable %q twice", out.Var)
			}
			seen[out.Var] = true
			if i > 0 && outs.List[i-1].Var > out.Var {
				t.Fatalf("outputs not sorted by variable: %q before %q", outs.List[i-1].Var, out.Var)
			}
		}
		m, err := outs.Render("cluster-vars", "flux-system", nil)
		if err != nil {
			t.Fatalf("rendering what was read: %v", err)
		}
		for _, out := range outs.List {
			if _, inCM := m.ConfigMap.Data[out.Var]; inCM == out.Sensitive {
				t.Fatalf("output %q (sensitive %t): in the ConfigMap %t", out.Name, out.Sensitive, inCM)
			}
		}
		if _, err := m.SecretYAML(); err != nil {
			t.Fatalf("encoding what was rendered: %v", err)
		}
	})
}

// FuzzParseValuesMap checks that no values map makes the reader panic, and
// that a refusal names the file.
func FuzzParseValuesMap(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "outputs", "values-map.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("configMaps:\n  - name: a\n    values:\n      x\\.y.z: out\n"))
	f.Add([]byte("configMaps: {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := outputs.ParseValuesMap("values.yaml", data)
		if err != nil && !strings.Contains(err.Error(), "values.yaml") {
			t.Fatalf("%v does not name the file", err)
		}
	})
}
