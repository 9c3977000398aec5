package layering

import (
	"fmt"
	"os"
	"path/filepath"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// CheckPaths reports every Kustomization layer whose path is not a
// directory under root, as *LayerError wrapping ErrMissingPath. A layer
// whose sourceRef is another source than the stack's (another Git
// repository, say) reads that source's tree, not root: its path is not
// checked here.
func (p *Plan) CheckPaths(root string) error {
	var errs []error
	for _, l := range p.Layers {
		if l.HelmRelease != nil || !p.ownSource(l.Kustomization) {
			continue
		}
		path := l.Kustomization.Spec.Path
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil || !fi.IsDir() {
			errs = append(errs, &LayerError{Layer: l.Name, File: l.File, Line: l.Line, Err: errdefs.Kind(ErrMissingPath, "path %q is not a directory under %s", path, root)})
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidPlan, joinErrs(errs))
	}
	return nil
}

// ownSource reports whether k reads the stack's own source (true when the
// Plan was not made by Build and does not know it).
func (p *Plan) ownSource(k *kustomizev1.Kustomization) bool {
	if p.sourceRef.Kind == "" {
		return true
	}
	ref := k.Spec.SourceRef
	ns := func(n string) string {
		if n == "" {
			return k.Namespace
		}
		return n
	}
	return ref.Kind == p.sourceRef.Kind && ref.Name == p.sourceRef.Name && ns(ref.Namespace) == ns(p.sourceRef.Namespace)
}
