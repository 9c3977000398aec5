package review

import sigyaml "sigs.k8s.io/yaml"

// toYAML prints v as YAML with sorted keys, or "" for nil.
func toYAML(v map[string]any) string {
	if v == nil {
		return ""
	}
	b, err := sigyaml.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
