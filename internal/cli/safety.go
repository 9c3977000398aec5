package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/sensitive"
	"github.com/fluxpack/fluxpack/oci"
)

// checkStackInputs refuses, for render, the IaC outputs files the stack
// file names (and --outputs) that lie inside the stack's folder: that
// folder is what push ships (fluxpack push ./platform, or the fleet's
// artifact), so an outputs file in it would go to the registry with its
// sensitive values. push itself refuses such a tree too (oci.ErrOutputsFile);
// render says it before anything is written.
func checkStackInputs(stackFile, outputsFlag string) error {
	data, err := os.ReadFile(stackFile)
	if err != nil {
		return nil // the stack loader says what is wrong with it
	}
	dir, err := filepath.Abs(filepath.Dir(stackFile))
	if err != nil {
		return nil
	}
	inside := func(p string) bool {
		if _, err := os.Stat(p); err != nil {
			return false // a missing file is the stack loader's error
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return false
		}
		rel, err := filepath.Rel(dir, abs)
		return err == nil && filepath.IsLocal(rel)
	}
	var errs []error
	refuse := func(p, by string) {
		errs = append(errs, &errdefs.FileError{Path: p, Err: fmt.Errorf("%s, inside the stack's folder %s, which push ships: %w", by, filepath.Dir(stackFile), oci.ErrOutputsFile)})
	}
	for _, in := range sensitive.Inputs(stackFile, data) {
		if outputsFlag != "" {
			break // --outputs replaces the stack's file
		}
		p := filepath.FromSlash(in.Path)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(stackFile), p)
		}
		if inside(p) {
			refuse(p, fmt.Sprintf("named by %s (%s:%d)", in.Field, stackFile, in.Line))
		}
	}
	if outputsFlag != "" && inside(outputsFlag) {
		refuse(outputsFlag, "given with --outputs")
	}
	return errors.Join(errs...)
}
