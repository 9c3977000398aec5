package render

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/layering"
)

// WithSecretDir writes each stack's Secrets (sensitive outputs, wake) to
// dir/<name>.secret.yaml, mode 0600, for Stacks (a fleet's clusters); dir
// must lie outside the rendered directory.
func WithSecretDir(dir string) Option {
	return funcRender(errdefs.NonEmpty("WithSecretDir", "directory name", dir, func(c *renderConfig) *string { return &c.secretDir }))
}

// NamedStack is one stack of those Stacks renders together: it renders to
// dir/<Name>.
type NamedStack struct {
	Name  string
	Stack *layering.Builder
}

// StackError is a problem of one stack of Stacks, naming it.
type StackError struct {
	Stack string
	Err   error
}

func (e *StackError) Error() string { return fmt.Sprintf("stack %q: %v", e.Stack, e.Err) }

func (e *StackError) Unwrap() error { return e.Err }

// Stacks renders every stack to dir/<name>/ as StackFile renders one (its
// own OCIRepository, vars ConfigMap and wake objects), with each stack's
// Secrets in WithSecretDir's dir: package fleet renders a fleet's clusters
// with it. Every stack is rendered in memory first: a problem in any of
// them is an error (a *StackError for each), and nothing is written. Every
// stack's directory and secret file is then written beside its place, and
// only once all are are they renamed into place, each directory replaced
// whole: ctx's end before then leaves dir as it was. Other directories of
// dir are left alone. WithOutputs and WithSecretFile are refused (each
// stack names its own outputs; the Secrets go to WithSecretDir). The
// Rendered are in the order of stacks.
func Stacks(ctx context.Context, stacks []NamedStack, dir string, opts ...Option) ([]*Rendered, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.outputs != "" || cfg.secretFile != "" {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "WithOutputs and WithSecretFile are per stack: a fleet names each cluster's outputs, and WithSecretDir takes the Secrets")
	}
	type job struct {
		name string
		cfg  *renderConfig
		prep *prepared
	}
	var jobs []job
	var errs []error
	for _, s := range stacks {
		cc := *cfg
		if cfg.secretDir != "" {
			cc.secretFile = filepath.Join(cfg.secretDir, s.Name+".secret.yaml")
		}
		p, err := prepare(s.Stack, &cc)
		if err != nil {
			errs = append(errs, &StackError{Stack: s.Name, Err: err})
			continue
		}
		jobs = append(jobs, job{s.Name, &cc, p})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	testhook.At(ctx, testhook.Prepared)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	staged := make([]*stagedRender, 0, len(jobs))
	defer func() {
		for _, st := range slices.Backward(staged) {
			st.abort() // a no-op once committed; the last first, so a directory made for the first is empty
		}
	}()
	for _, j := range jobs {
		st, err := j.prep.stage(filepath.Join(dir, j.name), j.cfg)
		if err != nil {
			return nil, &StackError{Stack: j.name, Err: err}
		}
		staged = append(staged, st)
	}
	testhook.At(ctx, testhook.Staged)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	out := make([]*Rendered, 0, len(jobs))
	for i, j := range jobs {
		r, err := staged[i].commit()
		if err != nil {
			return out, &StackError{Stack: j.name, Err: err}
		}
		out = append(out, r)
	}
	return out, nil
}

// Stack renders a stack into dir (which it replaces, as StackFile does),
// with its Secrets left out (Rendered.LeftOut, WakeLeftOut say which):
// what is pushed for it.
func Stack(b *layering.Builder, dir string) (*Rendered, error) {
	cfg := &renderConfig{}
	p, err := prepare(b, cfg)
	if err != nil {
		return nil, err
	}
	return p.write(dir, cfg)
}

// StackFiles renders a stack in memory: the files Stack would write
// (paths relative to its directory), with its Secrets left out, as they
// are from what is pushed. Problems are Build's and CheckPaths'.
func StackFiles(b *layering.Builder) ([]layering.File, error) {
	p, err := prepare(b, &renderConfig{})
	if err != nil {
		return nil, err
	}
	return p.files, nil
}
