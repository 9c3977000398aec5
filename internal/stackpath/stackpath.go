// Package stackpath relates the two places a stack's layer paths can start
// from: the repository's root, where Flux reads them (a Kustomization's
// spec.path, an Argo CD Application's source.path), and the stack file's
// folder, where fluxpack render reads them. Import writes the second, so
// that the stack file it writes renders where it is written; Flux, reading
// ../x from the root, resolves it to the root's x.
package stackpath

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Root returns the nearest directory at or above dir that holds .git, and
// whether there is one.
func Root(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// Dir returns the folder of stackFile relative to root, slash-separated
// ("." for the root itself), and false when the folder is outside root.
func Dir(root, stackFile string) (string, bool, error) {
	abs, err := filepath.Abs(stackFile)
	if err != nil {
		return "", false, err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", false, err
	}
	rel, err := filepath.Rel(absRoot, filepath.Dir(abs))
	if err != nil || rel != "." && !filepath.IsLocal(rel) {
		return "", false, nil //nolint:nilerr // outside the root: the caller says so
	}
	return filepath.ToSlash(rel), true, nil
}

// FromDir is p, a path relative to the root, relative to dir (a folder
// relative to the root, as Dir returns it) instead, starting with ./ or
// ../ as a layer's path does.
func FromDir(dir, p string) string {
	if dir == "." {
		return p
	}
	rel, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(path.Clean(p)))
	if err != nil { // both are relative: it cannot fail
		return p
	}
	rel = filepath.ToSlash(rel)
	if rel != ".." && !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel
}
