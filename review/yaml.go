package review

import "github.com/fluxpack/fluxpack/internal/yamlutil"

// toYAML prints v as YAML with sorted keys, or "" for nil: what
// sigs.k8s.io/yaml's Marshal prints, made without its JSON round trip
// where yamlutil can.
func toYAML(v map[string]any) string {
	if v == nil {
		return ""
	}
	if b, ok := yamlutil.ObjectYAML(v); ok {
		return string(b)
	}
	b, err := yamlutil.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
