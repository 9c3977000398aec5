package outputs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

func yamlToJSON(data []byte) ([]byte, error) { return sigyaml.YAMLToJSON(data) }

// readYAMLMap reads a YAML map of name → value. YAML 1.2 typing applies
// (yes stays a string); integers of any size stay exact.
func readYAMLMap(data []byte, refuseSecretPlaceholder bool) ([]Output, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntax(data, err)
	}
	if doc.Kind == 0 {
		return nil, nil // empty file: no outputs
	}
	top := &doc
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return nil, atLine(top.Line, fmt.Errorf("%w: want a YAML map of output name to value", ErrWrongShape))
	}
	var list []Output
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, atLine(k.Line, fmt.Errorf("%w: a key is not a scalar", ErrWrongShape))
		}
		if first, dup := seen[k.Value]; dup {
			return nil, atLine(k.Line, fmt.Errorf("%w: key %q appears twice (first at line %d)", ErrMalformed, k.Value, first))
		}
		seen[k.Value] = k.Line
		val, err := nodeValue(v, 0)
		if err != nil {
			return nil, atLine(v.Line, fmt.Errorf("output %q: %w", k.Value, err))
		}
		if refuseSecretPlaceholder && hasSecretPlaceholder(val) {
			return nil, atLine(k.Line, fmt.Errorf("output %q: %w", k.Value, ErrSecretPlaceholder))
		}
		list = append(list, Output{Name: k.Value, Line: k.Line, raw: val})
	}
	return finish(list)
}

// yamlSyntax keeps a YAML syntax error's "line N: …" position but drops
// any quoted input from the message, so a value never reaches an error.
func yamlSyntax(data []byte, err error) error {
	return atLine(yamlutil.ErrorLineIn(data, err), fmt.Errorf("%w: invalid YAML", ErrMalformed))
}

// nodeValue converts a YAML node to the values encoding/json decodes to,
// with json.Number for numbers.
func nodeValue(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("%w: nested more than 100 levels", ErrWrongShape)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return nodeValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return nodeValue(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%w: a map key at line %d is not a scalar", ErrWrongShape, k.Line)
			}
			val, err := nodeValue(v, depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = val
		}
		return out, nil
	case yaml.ScalarNode:
		return scalarValue(n), nil
	}
	return nil, fmt.Errorf("%w: unexpected YAML node at line %d", ErrWrongShape, n.Line)
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		text := strings.ReplaceAll(n.Value, "_", "")
		if i, ok := new(big.Int).SetString(text, 0); ok {
			return json.Number(i.String())
		}
	case "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value)
		}
		var f float64
		if n.Decode(&f) == nil {
			if s := strconv.FormatFloat(f, 'g', -1, 64); json.Valid([]byte(s)) {
				return json.Number(s)
			}
		}
	}
	return n.Value
}

// readEnv reads NAME=value lines. Values are strings; quotes: "…" with
// \n \r \t \" \\ \$ escapes, '…' literal; unquoted values end at " #".
func readEnv(data []byte) ([]Output, error) {
	var list []Output
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		name, value, ok := strings.Cut(t, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\"'") {
			return nil, atLine(n, fmt.Errorf("%w: want NAME=value", ErrMalformed))
		}
		v, err := envValue(strings.TrimSpace(value))
		if err != nil {
			return nil, atLine(n, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err))
		}
		if first, dup := seen[name]; dup {
			return nil, atLine(n, fmt.Errorf("%w: %s is set twice (first at line %d)", ErrMalformed, name, first))
		}
		seen[name] = n
		list = append(list, Output{Name: name, Line: n, raw: v})
	}
	return finish(list)
}

func envValue(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `'`):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated single quote")
		}
		if rest := strings.TrimSpace(v[end+2:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text after the closing quote")
		}
		return v[1 : end+1], nil
	case strings.HasPrefix(v, `"`):
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '"':
				if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", fmt.Errorf("text after the closing quote")
				}
				return b.String(), nil
			case c == '\\' && i+1 < len(v):
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("unterminated double quote")
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			v = v[:i]
		}
		return strings.TrimSpace(v), nil
	}
}

// readTofuSecret reads the Secret tofu-controller writes for
// spec.writeOutputsToSecret.
func readTofuSecret(data []byte) ([]Output, error) {
	j, err := yamlToJSON(data)
	if err != nil {
		return nil, yamlSyntax(data, err)
	}
	var s struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := json.Unmarshal(j, &s); err != nil || s.Kind != "Secret" || s.APIVersion != "v1" {
		return nil, fmt.Errorf("%w: want a v1 Secret with data (tofu-controller writeOutputsToSecret)", ErrWrongShape)
	}
	values := map[string]string{}
	for k, v := range s.Data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("%w: data key %q is not base64", ErrMalformed, k)
		}
		values[k] = string(b)
	}
	for k, v := range s.StringData {
		values[k] = v
	}
	var list []Output
	for _, k := range sortedKeys(values) {
		if strings.HasSuffix(k, "__type") {
			continue
		}
		var raw any = values[k]
		if t, ok := values[k+"__type"]; ok {
			typ, err := decodeJSON([]byte(t))
			if err != nil {
				return nil, fmt.Errorf("%w: %s__type is not JSON", ErrMalformed, k)
			}
			if typ != "string" {
				raw, err = decodeJSON([]byte(values[k]))
				if err != nil {
					return nil, fmt.Errorf("%w: output %q: typed %s but its value is not JSON", ErrMalformed, k, t)
				}
			}
		}
		list = append(list, Output{Name: k, Sensitive: true, raw: raw})
	}
	return finish(list)
}
