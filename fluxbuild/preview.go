package fluxbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// ErrNoKustomization is wrapped by ReadKustomization's error about a file
// without the Kustomization asked for.
var ErrNoKustomization = errors.New("no Kustomization")

// Preview returns, as a YAML stream, the objects kustomize-controller
// would apply for ks from src: Build, then what the controller does after
// the build (substitute.Render: postBuild substitution with substituteFrom
// satisfied from substitute.WithSources, Flux's labels, commonMetadata).
// It is what `flux build kustomization --dry-run` prints for the same
// inputs, byte for byte. Preview only reads src.
func Preview(ctx context.Context, src Source, ks *kustomizev1.Kustomization, opts ...substitute.RenderOption) ([]byte, error) {
	name := kustomizationRef(ks)
	b, err := build(ctx, src, ks, true, &config{}) // takes kustomizeMu as a Build does
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", name, err)
	}
	// Substitution reads kustomize's global OpenAPI schema (cluster
	// scope), which only a build that changes it resets, under the lock
	// alone: previews share the lock with each other and with the builds
	// that leave it alone.
	kustomizeMu.RLock()
	defer kustomizeMu.RUnlock()
	out, err := substitute.Render(ks, b.resources, opts...)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", name, err)
	}
	return out, nil
}

// kustomizationRef names ks as Flux's events do.
func kustomizationRef(ks *kustomizev1.Kustomization) string {
	if ks.Namespace == "" {
		return kustomizev1.KustomizationKind + "/" + ks.Name
	}
	return kustomizev1.KustomizationKind + "/" + ks.Namespace + "/" + ks.Name
}

// ReadKustomization reads the Flux Kustomization named name from a YAML file
// of one or more documents, as `flux build kustomization --kustomization-file`
// does (other documents are skipped). With name "" the file must hold
// exactly one Kustomization.
func ReadKustomization(path, name string) (*kustomizev1.Kustomization, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading Kustomization: %w", err)
	}
	var found []*kustomizev1.Kustomization
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for n := 1; ; n++ {
		ks := &kustomizev1.Kustomization{}
		err := dec.Decode(ks)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &FileError{Path: path, Err: fmt.Errorf("document %d: %w", n, err)}
		}
		if strings.HasPrefix(ks.APIVersion, kustomizev1.GroupVersion.Group+"/") && ks.Kind == kustomizev1.KustomizationKind &&
			(name == "" || ks.Name == name) {
			found = append(found, ks)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && name != "":
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w %q (%s)", ErrNoKustomization, name, kustomizev1.GroupVersion.Group)}
	case len(found) == 0:
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w (%s)", ErrNoKustomization, kustomizev1.GroupVersion.Group)}
	default:
		return nil, &FileError{Path: path, Err: fmt.Errorf("%d Kustomizations named %q; choose one by name", len(found), name)}
	}
}
