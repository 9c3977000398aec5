package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// WithLintOptions passes options to lint on both sides of CompareStack
// and CompareFleet (for Compare, give them to fluxrepo.WithLint in
// WithReadOptions).
func WithLintOptions(opts ...lint.Option) Option {
	return optionFunc(func(c *config) error {
		if slices.Contains(opts, nil) {
			return errdefs.InvalidOption("nil lint option")
		}
		c.lint = append(c.lint, opts...)
		return nil
	})
}

// stackSide is one side of a stack comparison: the stack's builder (nil
// when the file is not on that side).
type stackSide struct {
	b *layering.Builder
}

func loadStack(path string) (*stackSide, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return &stackSide{}, nil
	}
	b, err := layering.LoadStack(path)
	if err != nil {
		return nil, err
	}
	return &stackSide{b: b}, nil
}

// CompareStack says what changing the repository at baseRoot into the one
// at headRoot does to the stack file stackRel (relative to both roots):
// the Flux objects the stack renders (its Kustomizations, source, vars),
// every layer's manifests as kustomize-controller builds them before
// substitution (the stack's variables come from IaC outputs at render
// time), lint's findings and the bootstrap order. Every layer is
// rendered: a stack is one folder.
func CompareStack(ctx context.Context, baseRoot, headRoot, stackRel string, opts ...Option) (*Report, error) {
	cfg, err := newCompareConfig(baseRoot, headRoot, opts)
	if err != nil {
		return nil, err
	}
	files, err := ChangedFiles(baseRoot, headRoot)
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", cfg.base, cfg.head, err)
	}
	base, err := loadStack(filepath.Join(baseRoot, filepath.FromSlash(stackRel)))
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", cfg.base, err)
	}
	head, err := loadStack(filepath.Join(headRoot, filepath.FromSlash(stackRel)))
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", cfg.head, err)
	}
	if base.b == nil && head.b == nil {
		return nil, fmt.Errorf("comparing %s with %s: %s is on neither side", cfg.base, cfg.head, stackRel)
	}
	return compareBuilders(ctx, cfg, stackRel, files, base.b, head.b)
}

// CompareFleet compares every cluster of the fleet file fleetRel (the
// clusters of both sides) as CompareStack compares a stack: one Report
// per cluster, Entry "FLEET#CLUSTER", in the order of the head's fleet
// file, then the clusters the change removes.
func CompareFleet(ctx context.Context, baseRoot, headRoot, fleetRel string, opts ...Option) ([]*Report, error) {
	cfg, err := newCompareConfig(baseRoot, headRoot, opts)
	if err != nil {
		return nil, err
	}
	files, err := ChangedFiles(baseRoot, headRoot)
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", cfg.base, cfg.head, err)
	}
	load := func(root string) (*layering.Fleet, error) {
		p := filepath.Join(root, filepath.FromSlash(fleetRel))
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		f, err := layering.LoadFleet(p)
		if err != nil {
			return nil, err
		}
		return f, f.Err()
	}
	bf, err := load(baseRoot)
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", cfg.base, err)
	}
	hf, err := load(headRoot)
	if err != nil {
		return nil, fmt.Errorf("at %s: %w", cfg.head, err)
	}
	if bf == nil && hf == nil {
		return nil, fmt.Errorf("comparing %s with %s: %s is on neither side", cfg.base, cfg.head, fleetRel)
	}
	var clusters []string
	for _, f := range []*layering.Fleet{hf, bf} {
		if f != nil {
			for _, c := range f.Clusters() {
				if !slices.Contains(clusters, c) {
					clusters = append(clusters, c)
				}
			}
		}
	}
	resolve := func(f *layering.Fleet, c string) (*layering.Builder, error) {
		if f == nil || !slices.Contains(f.Clusters(), c) {
			return nil, nil
		}
		return f.Resolve(c)
	}
	var out []*Report
	for _, c := range clusters {
		bb, err := resolve(bf, c)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", cfg.base, err)
		}
		hb, err := resolve(hf, c)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", cfg.head, err)
		}
		r, err := compareBuilders(ctx, cfg, fleetRel+"#"+c, files, bb, hb)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// relativeFiles names the files of a side's findings relative to the
// side's root, as a reviewer and a code-scanning upload know them.
func relativeFiles(r *lint.Report, root string) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return
	}
	rel := func(f string) string {
		if !filepath.IsAbs(filepath.FromSlash(f)) {
			return f
		}
		if x, err := filepath.Rel(abs, filepath.FromSlash(f)); err == nil && filepath.IsLocal(x) {
			return filepath.ToSlash(x)
		}
		return f
	}
	for i := range r.Findings {
		r.Findings[i].File = rel(r.Findings[i].File)
		r.Findings[i].LayerFile = rel(r.Findings[i].LayerFile)
		for j := range r.Findings[i].Places {
			r.Findings[i].Places[j].File = rel(r.Findings[i].Places[j].File)
		}
	}
}

func newCompareConfig(baseRoot, headRoot string, opts []Option) (*config, error) {
	cfg := &config{base: baseRoot, head: headRoot, baseRoot: baseRoot, headRoot: headRoot}
	for _, o := range opts {
		if o == nil {
			return nil, errdefs.InvalidOption("nil Option")
		}
		if err := o.apply(cfg); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func compareBuilders(ctx context.Context, cfg *config, entry string, files []string, base, head *layering.Builder) (*Report, error) {
	roots := [2]string{cfg.baseRoot, cfg.headRoot}
	r := &Report{Base: cfg.base, Head: cfg.head, Entry: entry, Files: files, All: true}
	var plans [2]*layering.Plan
	var objs [2][]Object
	var reps [2]*lint.Report
	for i, b := range []*layering.Builder{base, head} {
		if b == nil {
			reps[i] = &lint.Report{}
			continue
		}
		p, _ := b.Draft()
		plans[i] = p
		o, rendered, err := stackObjects(ctx, p)
		if err != nil {
			return nil, err
		}
		objs[i] = o
		for _, x := range rendered {
			if !slices.Contains(r.Rendered, x) {
				r.Rendered = append(r.Rendered, x)
			}
		}
		if reps[i], err = lint.Stack(ctx, b, "", cfg.lint...); err != nil {
			return nil, err
		}
		relativeFiles(reps[i], roots[i])
	}
	slices.Sort(r.Rendered)
	strip := append(slices.Clone(DefaultStripAttrs), cfg.strip...)
	r.Objects = DiffObjects(objs[0], objs[1], strip)
	r.Images = DiffImages(objs[0], objs[1])
	r.Findings = DiffFindings(reps[0], reps[1])
	var bv, hv *planView
	if plans[0] != nil {
		bv = &planView{plans[0]}
	}
	if plans[1] != nil {
		hv = &planView{plans[1]}
	}
	r.Bootstrap = diffBootstrap(bv, hv)
	return r, nil
}

// stackObjects returns what a stack's Plan ships: the Flux objects it
// renders (producer Stack/NAME) and each layer's manifests as built from
// the stack's folder. A layer that does not build is left out, as lint
// reports it.
func stackObjects(ctx context.Context, p *layering.Plan) ([]Object, []string, error) {
	producer := "Stack/" + p.Name
	files, err := p.Files()
	if err != nil {
		// A plan with problems renders no files: lint says why.
		files = nil
	}
	var out []Object
	rendered := []string{producer}
	for _, f := range files {
		if path.Base(f.Path) == "kustomization.yaml" {
			continue // kustomize's own file, not an object Flux applies
		}
		objs, err := ParseObjects(producer, f.Data)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, objs...)
	}
	dir := p.Dir
	if dir == "" {
		dir = "."
	}
	for _, l := range p.Layers {
		if l.Kustomization == nil || l.HelmRelease != nil {
			continue
		}
		name := p.KustomizationRef(l.Name)
		rendered = append(rendered, name)
		built, err := fluxbuild.Build(ctx, fluxbuild.Source{Dir: dir}, l.Kustomization)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			continue
		}
		for _, o := range built {
			data, err := yaml.Marshal(o.Node)
			if err != nil {
				return nil, nil, err
			}
			objs, err := ParseObjects(name, data)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, objs...)
		}
	}
	sortObjects(out)
	return out, rendered, nil
}
