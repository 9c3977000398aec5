// Package preview prints what kustomize-controller applies for one
// Kustomization from a local directory: `flux build kustomization NAME
// --path DIR --kustomization-file KS --dry-run`, without a cluster and in
// linear time.
//
// It uses Flux's own kustomization generator and kustomize build
// (github.com/fluxcd/pkg/kustomize), so the objects are the ones Flux
// builds, and package substitute for postBuild, which follows
// kustomize-controller step for step (see substitute.Substituter) but edits
// each object in place: Flux replaces each substituted object in the
// resource map, a linear search per object, which makes its build quadratic
// (10,000 objects: minutes). It lives under internal/ to keep Flux's
// controller dependencies out of the importable packages' graph.
package preview

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/substitute"
)

// The labels kustomize-controller sets on every object it applies.
const (
	NameLabel      = "kustomize.toolkit.fluxcd.io/name"
	NamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// sopsMask is what flux build prints instead of SOPS-encrypted values.
const sopsMask = "**SOPS**"

// Build returns, as one YAML stream, the objects kustomize-controller
// applies for ks from dir (the local copy of ks.spec.path): the kustomize
// build of dir with the kustomization.yaml Flux generates when there is none
// and ks's targetNamespace, namePrefix/Suffix, patches, images and
// components; postBuild substitution with substituteFrom satisfied from src
// (strict unless opts say otherwise); the kustomize.toolkit.fluxcd.io/name
// and /namespace labels; SOPS-encrypted Secret values masked. dir is never
// written to.
func Build(dir string, ks *kustomizev1.Kustomization, src *substitute.Sources, opts ...substitute.SubstituteOption) ([]byte, error) {
	name := "Kustomization/" + ks.Namespace + "/" + ks.Name
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", name, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("previewing %s: %s is not a directory", name, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", name, err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", name, err)
	}
	data, kfile, _, err := fluxkustomize.NewGenerator("", unstructured.Unstructured{Object: u}).GenerateManifest(abs)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: generating kustomization.yaml for %s: %w", name, dir, err)
	}
	m, err := fluxkustomize.Build(overlay{FileSystem: filesys.MakeFsOnDisk(), path: kfile, data: data}, abs)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: kustomize build of %s: %w", name, dir, err)
	}
	sub := substitute.NewSubstituter(ks, src, opts...)
	for _, res := range m.Resources() {
		if _, err := sub.Resource(res); err != nil {
			return nil, fmt.Errorf("previewing %s: %w", name, err)
		}
		labels := res.GetLabels()
		labels[NameLabel] = ks.Name
		labels[NamespaceLabel] = ks.Namespace
		if err := res.SetLabels(labels); err != nil {
			return nil, fmt.Errorf("previewing %s: labelling %s: %w", name, res.CurId(), err)
		}
		if err := maskSOPS(res); err != nil {
			return nil, fmt.Errorf("previewing %s: %w", name, err)
		}
	}
	return m.AsYaml()
}

// maskSOPS hides the values of a SOPS-encrypted Secret and drops SOPS
// metadata, as flux build does for its output.
func maskSOPS(res *resource.Resource) error {
	y, err := res.AsYAML()
	if err != nil {
		return err
	}
	if res.GetKind() != "Secret" {
		if bytes.Contains(y, []byte("\nsops:")) {
			return res.PipeE(yaml.FieldClearer{Name: "sops"})
		}
		return nil
	}
	if !bytes.Contains(y, []byte("sops:")) || !bytes.Contains(y, []byte("mac: ENC[")) {
		return nil
	}
	if err := res.PipeE(yaml.FieldClearer{Name: "sops"}); err != nil {
		return err
	}
	data := res.GetDataMap()
	for k := range data {
		data[k] = base64.StdEncoding.EncodeToString([]byte(sopsMask))
	}
	res.SetDataMap(data)
	if sd, err := res.Pipe(yaml.Lookup("stringData")); err == nil && sd != nil {
		masked := map[string]string{}
		_ = sd.VisitFields(func(n *yaml.MapNode) error {
			masked[yaml.GetValue(n.Key)] = sopsMask
			return nil
		})
		return res.SetMapField(yaml.NewMapRNode(&masked), "stringData")
	}
	return nil
}

// overlay is the disk with one file (the generated kustomization.yaml)
// replaced, so the directory itself is never written to.
type overlay struct {
	filesys.FileSystem
	path string
	data []byte
}

func (o overlay) ReadFile(p string) ([]byte, error) {
	if filepath.Clean(p) == o.path {
		return o.data, nil
	}
	return o.FileSystem.ReadFile(p)
}

func (o overlay) Exists(p string) bool {
	return filepath.Clean(p) == o.path || o.FileSystem.Exists(p)
}

func (o overlay) IsDir(p string) bool {
	if filepath.Clean(p) == o.path {
		return false
	}
	return o.FileSystem.IsDir(p)
}

// File is Build for the command line: the Kustomization named name (or the
// only one) from the YAML file ksFile, the ConfigMaps and Secrets of the
// varsFrom files for its substituteFrom, and dir.
func File(dir, ksFile, name string, varsFrom []string, opts ...substitute.SubstituteOption) ([]byte, error) {
	ks, err := ReadKustomization(ksFile, name)
	if err != nil {
		return nil, err
	}
	src, err := substitute.ReadSources(varsFrom...)
	if err != nil {
		return nil, err
	}
	return Build(dir, ks, src, opts...)
}

// ReadKustomization reads the Kustomization named name from path, a YAML
// stream that may hold other objects; with name "", the stream must hold
// exactly one Kustomization. Unknown fields are an error naming the file and
// the document's first line.
func ReadKustomization(path, name string) (*kustomizev1.Kustomization, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the Kustomization: %w", err)
	}
	var found []*kustomizev1.Kustomization
	line := 1
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		at := line
		line += bytes.Count(doc, []byte("\n")) + 1
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := sigsyaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, at, err)
		}
		if tm.Kind != kustomizev1.KustomizationKind || !strings.HasPrefix(tm.APIVersion, kustomizev1.GroupVersion.Group+"/") {
			continue
		}
		ks, err := decodeKustomization(doc)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: Kustomization: %w", path, at, err)
		}
		if name == "" || ks.Name == name {
			found = append(found, ks)
		}
	}
	switch {
	case len(found) == 1:
		if found[0].Namespace == "" {
			found[0].Namespace = "flux-system"
		}
		return found[0], nil
	case len(found) == 0 && name != "":
		return nil, fmt.Errorf("%s: no Kustomization named %q", path, name)
	case len(found) == 0:
		return nil, fmt.Errorf("%s: no Kustomization (apiVersion %s)", path, kustomizev1.GroupVersion)
	default:
		return nil, fmt.Errorf("%s: %d Kustomizations: name the one to preview", path, len(found))
	}
}

// decodeKustomization decodes one YAML document as the API server does:
// field names match case-sensitively, and unknown or duplicate fields are
// errors (encoding/json alone would take "postbuild" for "postBuild").
func decodeKustomization(doc []byte) (*kustomizev1.Kustomization, error) {
	j, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	ks := &kustomizev1.Kustomization{}
	strictErrs, err := sigsjson.UnmarshalStrict(j, ks, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, errors.Join(strictErrs...)
	}
	return ks, nil
}
