// Package sensitive tells which files of a tree must not be pushed because
// they hold IaC outputs: files that hold a value an IaC tool marks
// sensitive (Find), and the outputs files a fluxpack Stack or Fleet file
// names (Inputs). Package oci runs both on every file it archives, so the
// package stays light: the standard library and go.yaml.in/yaml/v3, both
// already in oci's dependencies. Package outputs, which reads these formats
// in full, holds Find to its own reading in a test.
//
// Formats recognised by Find:
//   - Terraform/OpenTofu `output -json`: an output with "sensitive": true
//     (its value is printed in clear);
//   - Pulumi `stack output --json`: a "[secret]" placeholder marks a
//     secret output (with --show-secrets the value is in clear and nothing
//     marks it, which is why the outputs files a stack names are refused
//     whatever they hold).
//
// A tofu-controller outputs Secret is a plaintext kind: Secret, which oci's
// Secret check already refuses. CloudFormation's describe-stacks prints a
// NoEcho parameter as "****" and has no sensitivity mark on outputs, so
// nothing in it can be told sensitive.
package sensitive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Finding is a value marked sensitive in an outputs file.
type Finding struct {
	Format string // "Terraform/OpenTofu" or "Pulumi"
	Output string // the output's name
	Line   int    // the line of the output's name
}

// Find reports the first output of data marked sensitive, in one of the
// formats the package doc lists. It is cheap for files that cannot hold
// one: only a JSON object mentioning "sensitive" or "[secret]" is decoded.
func Find(data []byte) (Finding, bool) {
	tf := bytes.Contains(data, []byte(`"sensitive"`))
	pulumi := bytes.Contains(data, []byte(`"[secret]"`))
	if !tf && !pulumi {
		return Finding{}, false
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Finding{}, false
	}
	members, ok := readObject(data)
	if !ok {
		return Finding{}, false
	}
	if tf && isTerraform(members) {
		for _, m := range members {
			var meta struct {
				Sensitive bool            `json:"sensitive"`
				Value     json.RawMessage `json:"value"`
			}
			// A null value is no secret (Terraform leaves it out).
			if json.Unmarshal(m.raw, &meta) == nil && meta.Sensitive && string(meta.Value) != "null" {
				return Finding{Format: "Terraform/OpenTofu", Output: m.key, Line: m.line}, true
			}
		}
		return Finding{}, false
	}
	if pulumi {
		for _, m := range members {
			if bytes.Contains(m.raw, []byte(`"[secret]"`)) && holdsPlaceholder(m.raw) {
				return Finding{Format: "Pulumi", Output: m.key, Line: m.line}, true
			}
		}
	}
	return Finding{}, false
}

type member struct {
	key  string
	line int
	raw  json.RawMessage
}

// readObject reads a top-level JSON object member by member, with the
// line of each key.
func readObject(data []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		off := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		members = append(members, member{key: key, line: 1 + bytes.Count(data[:off], []byte("\n")), raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return members, true
}

// isTerraform reports whether every member is an object with "value" and
// "type" or "sensitive", as package outputs tells Terraform's JSON.
func isTerraform(members []member) bool {
	if len(members) == 0 {
		return false
	}
	for _, m := range members {
		var meta map[string]json.RawMessage
		if json.Unmarshal(m.raw, &meta) != nil {
			return false
		}
		_, hasValue := meta["value"]
		_, hasType := meta["type"]
		_, hasSensitive := meta["sensitive"]
		if !hasValue || !(hasType || hasSensitive) {
			return false
		}
	}
	return true
}

func holdsPlaceholder(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return v == "[secret]"
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// Input is an IaC outputs file a Stack or Fleet file names.
type Input struct {
	// Path is the file, slash-separated, relative to the folder of the
	// file naming it (as the stack file says it), cleaned.
	Path string
	// Field says where it is named, e.g. `Stack "platform": spec.vars[0].outputs`.
	Field string
	Line  int
}

// Inputs lists the outputs files that a fluxpack Stack or Fleet file
// (apiVersion fluxpack.dev/…, any document of data) names: a Stack's
// spec.vars[].outputs and a Fleet's spec.clusters[].outputs. Absolute
// paths and paths that leave the file's folder are returned as written.
// Data that is not such a file gives nothing; the check is cheap for
// files that do not mention fluxpack.dev.
func Inputs(name string, data []byte) []Input {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
	default:
		return nil
	}
	if !bytes.Contains(data, []byte("fluxpack.dev/")) {
		return nil
	}
	var out []Input
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return out // EOF, or not YAML: the stack loader says what is wrong with it
		}
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		if !strings.HasPrefix(str(m, "apiVersion"), "fluxpack.dev/") {
			continue
		}
		kind, objName := str(m, "kind"), str(field(m, "metadata"), "name")
		var list *yaml.Node
		var listField string
		switch kind {
		case "Stack":
			list, listField = field(field(m, "spec"), "vars"), "spec.vars"
		case "Fleet":
			list, listField = field(field(m, "spec"), "clusters"), "spec.clusters"
		default:
			continue
		}
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for i, item := range list.Content {
			v := field(item, "outputs")
			if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
				continue
			}
			p := v.Value
			if !path.IsAbs(p) {
				p = path.Clean(p)
			}
			out = append(out, Input{Path: p, Field: fmt.Sprintf("%s %q: %s[%d].outputs", kind, objName, listField, i), Line: v.Line})
		}
	}
}

func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func str(n *yaml.Node, key string) string {
	if v := field(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}
