package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/stackfile"
)

// WithLintOptions passes options to lint on both sides (the charts
// HelmReleases install, operators, configuration).
func WithLintOptions(opts ...lint.Option) Option {
	return optionFunc(func(c *config) error {
		if slices.Contains(opts, nil) {
			return errdefs.InvalidOption("nil lint option")
		}
		c.lint = append(c.lint, opts...)
		return nil
	})
}

// fileChange is a file (a stack's, a fleet's) loaded on both sides of a
// comparison, with what compareBuilders needs besides.
type fileChange[T any] struct {
	cfg        *config
	files      []string // the files the change touches
	headRules  *gitRules
	base, head T // the zero T on a side without the file
}

// compareFile starts CompareStack and CompareFleet: it applies opts, lists
// the files the change touches, and loads rel (relative to both roots)
// with load on each side that has it. An error names the side; rel on
// neither side is one.
func compareFile[T any](baseRoot, headRoot, rel string, opts []Option, load func(path string) (T, error)) (*fileChange[T], error) {
	cfg, err := newCompareConfig(baseRoot, headRoot, opts)
	if err != nil {
		return nil, err
	}
	files, headRules, err := cfg.changedFiles()
	if err != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", cfg.base, cfg.head, err)
	}
	found := 0
	base, head, err := bothSides(cfg, baseRoot, headRoot, func(root string) (T, error) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			var none T
			return none, nil
		}
		found++
		return load(p)
	})
	if err != nil {
		return nil, err
	}
	if found == 0 {
		return nil, fmt.Errorf("comparing %s with %s: %s is on neither side", cfg.base, cfg.head, rel)
	}
	return &fileChange[T]{cfg: cfg, files: files, headRules: headRules, base: base, head: head}, nil
}

// bothSides calls load with the base's argument, then with the head's,
// and names the side in an error.
func bothSides[A, T any](cfg *config, base, head A, load func(A) (T, error)) (T, T, error) {
	var none T
	b, err := load(base)
	if err != nil {
		return none, none, fmt.Errorf("at %s: %w", cfg.base, err)
	}
	h, err := load(head)
	if err != nil {
		return none, none, fmt.Errorf("at %s: %w", cfg.head, err)
	}
	return b, h, nil
}

// loadFleet loads a fleet file, and says its clusters' problems.
func loadFleet(path string) (*fleet.Fleet, error) {
	f, err := fleet.Load(path)
	if err != nil {
		return nil, err
	}
	return f, f.Err()
}

// CompareStack says what changing the repository at baseRoot into the one
// at headRoot does to the stack file stackRel (relative to both roots):
// the Flux objects the stack renders (its Kustomizations, source, vars),
// every layer's manifests as kustomize-controller builds them before
// substitution (the stack's variables come from IaC outputs at render
// time), lint's findings and the bootstrap order. Every layer is
// rendered: a stack is one folder.
func CompareStack(ctx context.Context, baseRoot, headRoot, stackRel string, opts ...Option) (*Report, error) {
	c, err := compareFile(baseRoot, headRoot, stackRel, opts, stackfile.Load)
	if err != nil {
		return nil, err
	}
	return compareBuilders(ctx, c.cfg, stackRel, c.files, c.headRules, c.base, c.head)
}

// CompareFleet compares every cluster of the fleet file fleetRel (the
// clusters of both sides) as CompareStack compares a stack: one Report
// per cluster, Entry "FLEET#CLUSTER", in the order of the head's fleet
// file, then the clusters the change removes.
func CompareFleet(ctx context.Context, baseRoot, headRoot, fleetRel string, opts ...Option) ([]*Report, error) {
	fc, err := compareFile(baseRoot, headRoot, fleetRel, opts, loadFleet)
	if err != nil {
		return nil, err
	}
	var clusters []string
	for _, f := range []*fleet.Fleet{fc.head, fc.base} {
		if f != nil {
			for _, c := range f.Clusters() {
				if !slices.Contains(clusters, c) {
					clusters = append(clusters, c)
				}
			}
		}
	}
	resolve := func(f *fleet.Fleet, c string) (*layering.Builder, error) {
		if f == nil || !slices.Contains(f.Clusters(), c) {
			return nil, nil
		}
		return f.Resolve(c)
	}
	var out []*Report
	for _, c := range clusters {
		bb, hb, err := bothSides(fc.cfg, fc.base, fc.head, func(f *fleet.Fleet) (*layering.Builder, error) { return resolve(f, c) })
		if err != nil {
			return nil, err
		}
		r, err := compareBuilders(ctx, fc.cfg, fleetRel+"#"+c, fc.files, fc.headRules, bb, hb)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// changedFiles returns the files the change touches (ChangedFiles) and
// what Git ignores in the head's tree.
func (cfg *config) changedFiles() ([]string, *gitRules, error) {
	var br, hr *gitRules
	var be, he error
	var wg sync.WaitGroup
	wg.Go(func() { br, be = loadGitRules(cfg.baseRoot) })
	hr, he = loadGitRules(cfg.headRoot)
	wg.Wait()
	err := cmp.Or(be, he)
	var files []string
	if err == nil {
		files, err = changedFiles(cfg.baseRoot, cfg.headRoot, br, hr)
	}
	if err != nil {
		return nil, nil, err
	}
	return files, hr, nil
}

func newCompareConfig(baseRoot, headRoot string, opts []Option) (*config, error) {
	cfg := &config{base: baseRoot, head: headRoot, baseRoot: baseRoot, headRoot: headRoot}
	if err := errdefs.ApplyOptions(cfg, opts, Option.apply, "nil Option"); err != nil {
		return nil, err
	}
	return cfg, nil
}

func compareBuilders(ctx context.Context, cfg *config, entry string, files []string, headRules *gitRules, base, head *layering.Builder) (*Report, error) {
	roots := [2]rootPaths{newRootPaths(cfg.baseRoot), newRootPaths(cfg.headRoot)}
	r := &Report{Base: cfg.base, Head: cfg.head, Entry: entry, Files: files, All: true}
	var plans [2]*layering.Plan
	var objs [2][]Object
	var reps [2]*lint.Report
	failed := [2]map[string]string{{}, {}}
	for i, b := range []*layering.Builder{base, head} {
		if b == nil {
			reps[i] = &lint.Report{}
			continue
		}
		p, _ := b.Draft()
		plans[i] = p
		o, rendered, err := stackObjects(ctx, p, failed[i])
		if err != nil {
			return nil, err
		}
		for k, why := range failed[i] {
			failed[i][k] = roots[i].rel(why) // no temporary folder in a message
		}
		objs[i] = o
		for _, x := range rendered {
			if !slices.Contains(r.Rendered, x) {
				r.Rendered = append(r.Rendered, x)
			}
		}
		lintOpts := cfg.lint
		if i == 0 {
			var shared []lint.Option
			shared, r.Outputs = sharedOutputs(p, head, cfg.baseRoot, cfg.headRoot, headRules)
			lintOpts = append(slices.Clip(lintOpts), shared...)
		}
		if reps[i], err = lint.Stack(ctx, b, "", lintOpts...); err != nil {
			return nil, err
		}
		roots[i].findings(reps[i])
	}
	// A producer that did not render on a side is left out on both, as
	// Compare leaves it out.
	r.NotRendered = notRendered(failed[0], failed[1])
	out := func(o Object) bool {
		_, bf := failed[0][o.Producer]
		_, hf := failed[1][o.Producer]
		return bf || hf
	}
	objs[0], objs[1] = slices.DeleteFunc(objs[0], out), slices.DeleteFunc(objs[1], out)
	r.Rendered = slices.DeleteFunc(r.Rendered, func(p string) bool {
		return slices.ContainsFunc(r.NotRendered, func(n NotRendered) bool { return n.Producer == p })
	})
	slices.Sort(r.Rendered)
	strip := append(slices.Clone(DefaultStripAttrs), cfg.strip...)
	r.Objects = DiffObjects(objs[0], objs[1], strip)
	r.Images = stackImages(objs[0], objs[1])
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

// sharedOutputs finds the base's vars entries whose IaC outputs file is
// not in the repository: outside its root (the README's ../terraform.json,
// beside the folder push ships), or a file Git ignores in the working
// tree. Such a file is not in a base revision, and what the base would
// read in its place (a path under a temporary folder) is nothing the
// change made; both sides read it where the working tree has it. It
// returns the lint options that say so and the files, named relative to
// the repository's root (absolute when the stack names them so).
//
// An entry that names its file relative to the stack (or fleet) file is
// found in the working tree at the same path relative to the root; one
// that names an absolute path outside the root is the same file on both
// sides. A fleet's outputs reach the stack as absolute paths: outside the
// root, one is taken as relative when a vars entry of the head names the
// same path relative to the head's root.
func sharedOutputs(p *layering.Plan, head *layering.Builder, baseRoot, headRoot string, headRules *gitRules) ([]lint.Option, []string) {
	broot, err1 := filepath.Abs(baseRoot)
	hroot, err2 := filepath.Abs(headRoot)
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	resolve := func(dir, f string) string {
		f = filepath.FromSlash(f)
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return f
		}
		return abs
	}
	headHas := func(want string) bool {
		if head == nil {
			return false
		}
		hp, _ := head.Draft()
		return slices.ContainsFunc(hp.Vars, func(v layering.VarsEntry) bool {
			return v.Outputs != "" && resolve(hp.Dir, v.Outputs) == want
		})
	}
	var opts []lint.Option
	var names []string
	for _, v := range p.Vars {
		if v.Outputs == "" {
			continue
		}
		abs := resolve(p.Dir, v.Outputs)
		rel, err := filepath.Rel(broot, abs)
		if err != nil {
			continue
		}
		there, name := filepath.Join(hroot, rel), filepath.ToSlash(rel)
		switch {
		case filepath.IsLocal(rel):
			if !headRules.ignored(name) {
				continue // in the repository: each side reads its own
			}
		case filepath.IsAbs(filepath.FromSlash(v.Outputs)) && !headHas(there):
			there, name = abs, abs // the same file on both sides
		}
		opts = append(opts, lint.WithOutputsFile(v.Name, there))
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return opts, names
}

// stackImages compares the images of two sides of a stack: the
// containers of what they render, and the values of their HelmReleases,
// whose charts a stack's comparison does not render.
func stackImages(base, head []Object) []ImageChange {
	var b, h imageIndex
	for _, x := range []struct {
		idx  *imageIndex
		objs []Object
	}{{&b, base}, {&h, head}} {
		x.idx.add(x.objs)
		for _, o := range x.objs {
			if o.ID.Kind == "HelmRelease" && strings.HasPrefix(o.ID.Group, "helm.toolkit.fluxcd.io") {
				x.idx.addValues(o)
			}
		}
	}
	return diffImageIndexes(&b, &h)
}

// stackObjects returns what a stack's Plan ships: the Flux objects it
// renders (producer Stack/NAME) and each layer's manifests as built from
// the stack's folder, and the producers it tried. A layer that does not
// build, and a HelmRelease layer (a stack's comparison renders no chart),
// is recorded in failed with why.
func stackObjects(ctx context.Context, p *layering.Plan, failed map[string]string) ([]Object, []string, error) {
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
		if l.HelmRelease != nil {
			ref := layering.ObjectRef{Kind: "HelmRelease", Namespace: cmp.Or(l.HelmRelease.Namespace, p.Namespace), Name: l.HelmRelease.Name}.String()
			rendered = append(rendered, ref)
			failed[ref] = "a stack's charts are not rendered (its HelmRelease is compared, and the images its values name)"
			continue
		}
		if l.Kustomization == nil {
			continue
		}
		name := p.KustomizationRef(l.Name)
		rendered = append(rendered, name)
		built, err := fluxbuild.Build(ctx, fluxbuild.Source{Dir: dir}, l.Kustomization)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			failed[name] = err.Error()
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
