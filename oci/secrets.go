package oci

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/sensitive"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// manifestExts are the files Flux's kustomize build reads as manifests.
var manifestExts = []string{".yaml", ".yml", ".json"}

// plaintextSecret looks in one manifest file for a core/v1 Secret that has
// data or stringData and is not SOPS-encrypted. It returns the line of the
// first such Secret and how to name it, or 0. Files that are not YAML are
// not manifests Flux could apply, so they pass.
func plaintextSecret(name string, data []byte) (line int, object string) {
	if !maySecret(name, data) {
		return 0, ""
	}
	for doc, err := range yamlutil.Documents(bytes.NewReader(data)) {
		if err != nil {
			return 0, "" // the rest is not YAML: kustomize would refuse it anyway
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		m := doc.Content[0]
		kind, kindLine := scalar(m, "kind")
		apiVersion, _ := scalar(m, "apiVersion")
		if kind != "Secret" || apiVersion != "v1" || yamlutil.Field(m, "sops") != nil {
			continue
		}
		if !hasPlaintextValues(yamlutil.Field(m, "data")) && !hasPlaintextValues(yamlutil.Field(m, "stringData")) {
			continue
		}
		obj := "Secret"
		if md := yamlutil.Field(m, "metadata"); md != nil {
			ns, _ := scalar(md, "namespace")
			n, _ := scalar(md, "name")
			obj = fmt.Sprintf("Secret/%s", n)
			if ns != "" {
				obj = fmt.Sprintf("Secret/%s/%s", ns, n)
			}
		}
		return kindLine, obj
	}
	return 0, ""
}

// maySecret reports whether plaintextSecret has to read the file name's
// YAML: a manifest that says "Secret" somewhere.
func maySecret(name string, data []byte) bool {
	return slices.Contains(manifestExts, strings.ToLower(path.Ext(name))) && bytes.Contains(data, []byte("Secret"))
}

// hasPlaintextValues reports whether a data/stringData mapping holds a value
// that is not a SOPS "ENC[…]" string.
func hasPlaintextValues(m *yaml.Node) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(m.Content); i += 2 {
		if v := m.Content[i]; !(v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, "ENC[")) {
			return true
		}
	}
	return false
}

func scalar(m *yaml.Node, key string) (string, int) {
	if m == nil || m.Kind != yaml.MappingNode {
		return "", 0
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value, m.Content[i].Line
		}
	}
	return "", 0
}

// Errors of IaC outputs in a tree, for errors.Is.
var (
	// ErrSensitiveOutput: a file holds an IaC output its tool marks
	// sensitive (Terraform/OpenTofu "sensitive": true, Pulumi "[secret]").
	ErrSensitiveOutput = errors.New("IaC output marked sensitive (keep IaC outputs files outside the pushed folder, or allow them with WithAllowSecrets)")
	// ErrOutputsFile: a file is the IaC outputs file a fluxpack Stack or
	// Fleet file of the tree names (vars[].outputs, clusters[].outputs).
	ErrOutputsFile = errors.New("IaC outputs file (keep it outside the pushed folder, or allow it with WithAllowSecrets)")
)

// sensitiveOutput refuses a file holding an IaC output marked sensitive.
func sensitiveOutput(display, name string, data []byte) error {
	f, ok := sensitive.Find(data)
	if !ok {
		return nil
	}
	return &FileError{Path: filepath.Join(display, filepath.FromSlash(name)), Line: f.Line, Err: fmt.Errorf("%s output %q: %w", f.Format, f.Output, ErrSensitiveOutput)}
}

// namedInputs are the archive names of the IaC outputs files that the
// Stack and Fleet files of a tree name, each with where it is named.
type namedInputs map[string]string

// add records the outputs files the file name (an archive name) names,
// if it is a Stack or Fleet file. Files outside the tree cannot be in it.
func (n *namedInputs) add(name string, data []byte) {
	for _, in := range sensitive.Inputs(name, data) {
		if path.IsAbs(in.Path) {
			continue
		}
		p := path.Join(path.Dir(name), in.Path)
		if p == ".." || strings.HasPrefix(p, "../") {
			continue
		}
		if *n == nil {
			*n = namedInputs{}
		}
		if _, ok := (*n)[p]; !ok {
			(*n)[p] = fmt.Sprintf("named by %s (%s:%d)", in.Field, name, in.Line)
		}
	}
}

// check refuses the tree's files that are named outputs files, all of
// them, in archive order.
func (n namedInputs) check(display string, entries []entry) error {
	if len(n) == 0 {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if by, ok := n[e.name]; ok && !e.dir {
			errs = append(errs, &FileError{Path: filepath.Join(display, filepath.FromSlash(e.name)), Err: fmt.Errorf("%s: %w", by, ErrOutputsFile)})
		}
	}
	return errors.Join(errs...)
}
