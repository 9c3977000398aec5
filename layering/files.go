package layering

import (
	"fmt"
	"os"
	"path/filepath"
)

// RenderFile reads a stack file, builds it, checks that every layer's path
// exists next to the file, and writes the result to dir (Plan.WriteDir).
// Any problem is an error and nothing is written.
func RenderFile(path, dir string) (*Plan, error) {
	b, err := LoadStack(path)
	if err != nil {
		return nil, err
	}
	plan, err := b.Build()
	if err != nil {
		return nil, err
	}
	if err := plan.checkPaths(b.dir); err != nil {
		return nil, err
	}
	if err := plan.WriteDir(dir); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkPaths reports every Kustomization layer whose path is not a
// directory under root, as *LayerError wrapping ErrMissingPath.
func (p *Plan) checkPaths(root string) error {
	var errs []error
	for _, l := range p.Layers {
		if l.HelmRelease != nil {
			continue
		}
		path := l.Kustomization.Spec.Path
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(path)))
		if err != nil || !fi.IsDir() {
			errs = append(errs, &LayerError{Layer: l.Name, At: l.At, Err: errorf(ErrMissingPath, "path %q is not a directory under %s", path, root)})
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidPlan, joinErrs(errs))
	}
	return nil
}

// GraphFile reads and builds a stack file and draws it (Plan.Graph).
func GraphFile(path, format string) ([]byte, error) {
	b, err := LoadStack(path)
	if err != nil {
		return nil, err
	}
	plan, err := b.Build()
	if err != nil {
		return nil, err
	}
	return plan.Graph(format)
}
