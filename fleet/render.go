package fleet

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// ClusterRendered is what Render wrote for one cluster.
type ClusterRendered struct {
	Cluster string
	// Dir is dir/<cluster>, as render.StackFile writes a stack's output.
	Dir string
	*render.Rendered
}

// Render renders every cluster of f to dir/<cluster>/ as render.StackFile
// renders a stack (its own OCIRepository, vars ConfigMap and wake
// objects), with each cluster's Secrets in render.WithSecretDir's dir
// (render.Stacks). Every cluster is rendered in memory first: a problem in
// any of them is an error naming the cluster, and nothing is written.
// Every cluster's directory and secret file is then written beside its
// place, and only once all are are they renamed into place, each
// cluster's directory replaced whole: ctx's end before then leaves dir as
// it was. Directories of clusters no longer in the fleet are left alone.
// render.WithOutputs and render.WithSecretFile are refused (the fleet says
// each cluster's outputs; the Secrets go to render.WithSecretDir).
func Render(ctx context.Context, f *Fleet, dir string, opts ...render.Option) ([]ClusterRendered, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	var stacks []render.NamedStack
	var errs []error
	for _, name := range f.Clusters() {
		b, err := f.Stack(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		stacks = append(stacks, render.NamedStack{Name: name, Stack: b})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rs, err := render.Stacks(ctx, stacks, dir, opts...)
	var out []ClusterRendered
	for i, r := range rs {
		name := stacks[i].Name
		out = append(out, ClusterRendered{Cluster: name, Dir: filepath.Join(dir, name), Rendered: r})
	}
	if err != nil {
		return out, f.clusterErrs(err)
	}
	return out, nil
}

// clusterErrs turns render.Stacks' *render.StackError, one or joined, into
// *ClusterError naming the fleet file.
func (f *Fleet) clusterErrs(err error) error {
	one := func(e error) error {
		var se *render.StackError
		if errors.As(e, &se) {
			return &ClusterError{Cluster: se.Stack, File: f.file, Err: se.Err}
		}
		return e
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, one(e))
		}
		return errors.Join(errs...)
	}
	return one(err)
}

// RenderCluster renders one cluster of f into dir (which it replaces, as
// render.StackFile does), with its Secrets left out (Rendered.LeftOut,
// WakeLeftOut say which): what is pushed for the cluster.
func RenderCluster(f *Fleet, cluster, dir string) (*render.Rendered, error) {
	b, err := f.Stack(cluster)
	if err != nil {
		return nil, err
	}
	r, err := render.Stack(b, dir)
	if err != nil {
		return nil, &ClusterError{Cluster: cluster, File: f.File(), Err: err}
	}
	return r, nil
}

// ClusterFiles renders one cluster of f in memory: the files RenderCluster
// would write (paths relative to its directory), with the cluster's
// Secrets left out, as they are from what is pushed.
func ClusterFiles(f *Fleet, cluster string) ([]layering.File, error) {
	b, err := f.Resolve(cluster)
	if err != nil {
		return nil, err
	}
	// StackFiles builds the stack: its problems are Stack's, named the same.
	files, err := render.StackFiles(b)
	if err != nil {
		file, line := f.Where(cluster)
		return nil, &ClusterError{Cluster: cluster, File: file, Line: line, Err: err}
	}
	return files, nil
}
