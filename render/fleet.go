package render

import (
	"context"
	"errors"
	"path/filepath"
	"slices"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/layering"
)

// WithSecretDir writes each cluster's Secrets (sensitive outputs, wake) to
// dir/<cluster>.secret.yaml, mode 0600, for Fleet; dir must lie
// outside the rendered directory.
func WithSecretDir(dir string) Option {
	return funcRender(errdefs.NonEmpty("WithSecretDir", "directory name", dir, func(c *renderConfig) *string { return &c.secretDir }))
}

// ClusterRendered is what Fleet wrote for one cluster.
type ClusterRendered struct {
	Cluster string
	// Dir is dir/<cluster>, as StackFile writes a stack's output.
	Dir string
	*Rendered
}

// Fleet renders every cluster of f to dir/<cluster>/ as StackFile
// renders a stack (its own OCIRepository, vars ConfigMap and wake objects),
// with each cluster's Secrets in WithSecretDir's dir. Every cluster is
// rendered in memory first: a problem in any of them is an error naming the
// cluster, and nothing is written. Every cluster's directory and secret
// file is then written beside its place, and only once all are are they
// renamed into place, each cluster's directory replaced whole: ctx's end
// before then leaves dir as it was. Directories of clusters no longer in
// the fleet are left alone. WithOutputs and WithSecretFile are refused
// (the fleet says each cluster's outputs; the Secrets go to WithSecretDir).
func Fleet(ctx context.Context, f *layering.Fleet, dir string, opts ...Option) ([]ClusterRendered, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.outputs != "" || cfg.secretFile != "" {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "fleet %q: WithOutputs and WithSecretFile are per stack: a fleet names each cluster's outputs, and WithSecretDir takes the Secrets", f.Name())
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	type job struct {
		name string
		cfg  *renderConfig
		prep *prepared
	}
	var jobs []job
	var errs []error
	for _, name := range f.Clusters() {
		b, err := f.Stack(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cc := *cfg
		if cfg.secretDir != "" {
			cc.secretFile = filepath.Join(cfg.secretDir, name+".secret.yaml")
		}
		p, err := prepare(b, &cc)
		if err != nil {
			errs = append(errs, &layering.ClusterError{Cluster: name, File: f.File(), Err: err})
			continue
		}
		jobs = append(jobs, job{name, &cc, p})
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
			return nil, &layering.ClusterError{Cluster: j.name, File: f.File(), Err: err}
		}
		staged = append(staged, st)
	}
	testhook.At(ctx, testhook.Staged)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	out := make([]ClusterRendered, 0, len(jobs))
	for i, j := range jobs {
		cd := filepath.Join(dir, j.name)
		r, err := staged[i].commit()
		if err != nil {
			return out, &layering.ClusterError{Cluster: j.name, File: f.File(), Err: err}
		}
		out = append(out, ClusterRendered{Cluster: j.name, Dir: cd, Rendered: r})
	}
	return out, nil
}

// Cluster renders one cluster of f into dir (which it replaces, as
// StackFile does), with its Secrets left out (Rendered.LeftOut,
// WakeLeftOut say which): what is pushed for the cluster.
func Cluster(f *layering.Fleet, cluster, dir string) (*Rendered, error) {
	b, err := f.Stack(cluster)
	if err != nil {
		return nil, err
	}
	cfg := &renderConfig{}
	p, err := prepare(b, cfg)
	if err != nil {
		return nil, &layering.ClusterError{Cluster: cluster, File: f.File(), Err: err}
	}
	return p.write(dir, cfg)
}

// ClusterFiles renders one cluster of f in memory: the files Cluster
// would write (paths relative to its directory), with the cluster's
// Secrets left out, as they are from what is pushed.
func ClusterFiles(f *layering.Fleet, cluster string) ([]layering.File, error) {
	b, err := f.Resolve(cluster)
	if err != nil {
		return nil, err
	}
	// prepare builds the stack: its problems are Stack's, named the same.
	p, err := prepare(b, &renderConfig{})
	if err != nil {
		file, line := f.Where(cluster)
		return nil, &layering.ClusterError{Cluster: cluster, File: file, Line: line, Err: err}
	}
	return p.files, nil
}
