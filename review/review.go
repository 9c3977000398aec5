package review

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/kinds"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/substitute"
)

// ErrInvalidOption is wrapped by the error of an option given a value it
// cannot use.
var ErrInvalidOption = errdefs.ErrInvalidOption

// Report is what a change does to a cluster's Flux tree.
type Report struct {
	// Base and Head name the two sides (a revision, or a folder).
	Base string `json:"base"`
	Head string `json:"head"`
	// Entry is the cluster's entry point, relative to the repository.
	Entry string `json:"entry"`
	// Files are the files the change touches, relative to the repository.
	Files []string `json:"files"`
	// Rendered names the producers rendered and compared: only those
	// whose inputs Files touch, unless WithAll. A producer that did not
	// render on a side is in NotRendered instead, and one left alone
	// (changed-only) is counted in Skipped: the three add up to every
	// producer of the two sides.
	Rendered []string `json:"rendered"`
	// Skipped counts the producers not rendered because no changed file
	// feeds them (changed-only): each Kustomization, and each HelmRelease
	// and ResourceSet its layer applies.
	Skipped int `json:"skipped,omitempty"`
	// All is true when every producer was rendered (WithAll).
	All bool `json:"all,omitempty"`
	// Objects are the objects the change adds, removes or changes.
	Objects []ObjectChange `json:"objects"`
	// NotRendered are the producers one side or both could not render: a
	// source not readable offline, a chart not available, a build error.
	// Their objects are left out on both sides, not shown as added or
	// removed.
	NotRendered []NotRendered `json:"notRendered,omitempty"`
	// Unresolved are the substituteFrom sources the tree does not hold
	// (made by Terraform, say): the variables they give are left as
	// written, ${var}, on both sides.
	Unresolved []string `json:"unresolved,omitempty"`
	// Findings are the lint findings the change introduces and fixes.
	Findings FindingsDiff `json:"findings"`
	// Bootstrap is what the change does to the order Flux applies in.
	Bootstrap Bootstrap `json:"bootstrap"`
	// Images are the container images the change adds, removes or
	// retags.
	Images []ImageChange `json:"images,omitempty"`
	// Unread is true when no layer of either side reads any of Files (a
	// change to CI configuration or documentation, say): the trees were
	// not read, so nothing was rendered or linted, and nothing changes.
	// Changed-only; WithAll reads both trees all the same.
	Unread bool `json:"unread,omitempty"`
	// Outputs are the IaC outputs files a stack names that are not in the
	// repository (outside its root, or ignored by Git), which both sides
	// read where the working tree has them: relative to the repository's
	// root, slash-separated.
	Outputs []string `json:"outputs,omitempty"`
}

// Changed reports whether the change does anything Report shows.
func (r *Report) Changed() bool {
	return len(r.Objects) > 0 || len(r.Findings.Introduced) > 0 || len(r.Findings.Fixed) > 0 || r.Bootstrap.Changed()
}

// NotRendered is a producer a side could not render.
type NotRendered struct {
	Producer string `json:"producer"`
	// Side is "base", "head" or "both".
	Side   string `json:"side"`
	Reason string `json:"reason"`
}

// Option configures Compare. Only this package implements it.
type Option interface{ apply(*config) error }

type config struct {
	all        bool
	strip      []string
	read       []fluxrepo.Option
	lint       []lint.Option
	base, head string
	// baseRoot and headRoot are the folders compared.
	baseRoot, headRoot string
	// changed are the files that differ, when the caller knows them
	// (CompareRevision, from Git's objects): Compare does not walk the
	// two folders again.
	changed *[]string
	// headRead is the head's first read, started by CompareRevision
	// while Git answers what the base is (firstRead's options).
	headRead *headRead
}

// withChangedFiles gives Compare the changed files CompareRevision read
// from Git's objects.
func withChangedFiles(files []string) Option {
	return optionFunc(func(c *config) error { c.changed = &files; return nil })
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// WithAll renders every producer of both sides, not only those the
// changed files feed.
func WithAll() Option { return optionFunc(func(c *config) error { c.all = true; return nil }) }

// WithStripAttrs leaves out, on both sides, the labels and annotations
// whose keys match one of patterns (path.Match syntax), in addition to
// DefaultStripAttrs.
func WithStripAttrs(patterns ...string) Option {
	return optionFunc(func(c *config) error {
		for _, p := range patterns {
			if _, err := filepath.Match(p, ""); err != nil || p == "" {
				return errdefs.InvalidOption("strip attribute %q: not a pattern", p)
			}
		}
		c.strip = append(c.strip, patterns...)
		return nil
	})
}

// WithReadOptions passes options to fluxrepo.Read on both sides
// (externals, sources; lint's options are WithLintOptions). fluxrepo.WithRoot
// is set by Compare.
func WithReadOptions(opts ...fluxrepo.Option) Option {
	return optionFunc(func(c *config) error {
		if slices.Contains(opts, nil) {
			return errdefs.InvalidOption("nil read option")
		}
		c.read = append(c.read, opts...)
		return nil
	})
}

// WithNames names the sides in the report (default: the folders).
func WithNames(base, head string) Option {
	return optionFunc(func(c *config) error { c.base, c.head = base, head; return nil })
}

// Compare says what changing the repository at baseRoot into the one at
// headRoot does to the cluster whose entry point is entry (relative to
// both roots): it reads both trees (fluxrepo.Read), renders on both sides
// the producers whose inputs the changed files feed (Affected; every one
// with WithAll) through the one engine (fluxbuild, lint's chart
// rendering), and compares objects (DiffObjects), lint findings
// (DiffFindings), the bootstrap order (DiffBootstrap) and images. An
// entry point missing on one side is a cluster added or removed. Errors
// are for what stops the comparison: neither side readable, a bad option,
// a cancelled ctx.
func Compare(ctx context.Context, baseRoot, headRoot, entry string, opts ...Option) (*Report, error) {
	cfg, err := newCompareConfig(baseRoot, headRoot, opts)
	if err != nil {
		return nil, err
	}
	if cfg.headRead != nil {
		defer cfg.headRead.discard() // unless taken below
	}
	entry = filepath.ToSlash(filepath.Clean(entry))
	if !filepath.IsLocal(filepath.FromSlash(entry)) && entry != "." {
		return nil, errdefs.InvalidOption("entry %q: want a path inside the repository", entry)
	}
	var files []string
	var filesErr error
	var wg sync.WaitGroup
	if cfg.all {
		// The files changed are compared while the head is read.
		wg.Go(func() { files, filesErr = ChangedFiles(baseRoot, headRoot) })
	} else {
		// Changed-only, a change no layer can read is said before
		// anything is read.
		if cfg.changed != nil {
			files = *cfg.changed
		} else if files, err = ChangedFiles(baseRoot, headRoot); err != nil {
			return nil, fmt.Errorf("comparing %s with %s: %w", cfg.base, cfg.head, err)
		}
		none, err := unread(headRoot, files)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", cfg.head, err)
		}
		if none {
			return &Report{Base: cfg.base, Head: cfg.head, Entry: entry, Files: files, Unread: true}, nil
		}
	}
	// The base reuses the head's objects of the layers no changed file
	// feeds (below): its lint reads them from the head's.
	read := cfg.read
	lintOpts := append(slices.Clone(cfg.lint), lint.WithObjectCache(lint.NewObjectCache()))
	var head *side
	if cfg.headRead != nil {
		if head, err = cfg.headRead.take(); head != nil {
			head.lintOpts = lintOpts
		}
	} else {
		head, err = readSide(ctx, headRoot, entry, firstRead(cfg), lintOpts)
	}
	wg.Wait()
	if head != nil {
		defer head.close()
	}
	if filesErr != nil {
		return nil, fmt.Errorf("comparing %s with %s: %w", cfg.base, cfg.head, filesErr)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", entry, cfg.head, err)
	}
	// The layers no changed file feeds are the same on both sides: the
	// base's read (and the head's whole read) takes them from the first
	// read of the head instead of building them (for its layers, lint and
	// order; with --all every producer is still rendered from the base's
	// own files).
	baseRead := read
	var headAffected map[string]bool
	headRefs := &folders{}
	if head.repo != nil {
		headAffected = affected(head.repo, files, headRefs)
		baseRead = append(slices.Clone(read), fluxrepo.WithReuse(head.repo, headAffected))
		if partial := readPartly(head.repo, headAffected); len(partial) > 0 {
			// The layers the change feeds that the first read read for
			// identities are read again, whole; the others are the
			// first read's.
			whole, err := readSide(ctx, headRoot, entry, append(slices.Clone(read), fluxrepo.WithReuse(head.repo, partial)), lintOpts)
			if err != nil {
				return nil, fmt.Errorf("reading %s at %s: %w", entry, cfg.head, err)
			}
			defer whole.close()
			head = whole
		}
	}
	r := &Report{Base: cfg.base, Head: cfg.head, Entry: entry, Files: files, All: cfg.all}
	// Each side is linted while the rest is done: lint only reads the tree.
	var lints sync.WaitGroup
	defer lints.Wait() // before the head closes
	var bl, hl *lint.Report
	var blErr, hlErr error
	lints.Go(func() { hl, hlErr = head.lint(ctx) })
	base, err := readSide(ctx, baseRoot, entry, baseRead, lintOpts)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", entry, cfg.base, err)
	}
	defer base.close()
	defer lints.Wait() // before the base closes too
	if base.repo == nil && head.repo == nil {
		return nil, fmt.Errorf("comparing %s with %s: %s is on neither side", cfg.base, cfg.head, entry)
	}
	lints.Go(func() { bl, blErr = base.lint(ctx) })
	want := func(string) bool { return true }
	if !cfg.all {
		a := maps.Clone(headAffected)
		if a == nil {
			a = map[string]bool{}
		}
		if base.repo != nil {
			// What the head read of the folders the change leaves alone
			// is the base's too.
			refs := &folders{}
			if head.repo != nil {
				refs = headRefs.forSide(head.repo.Root, base.repo.Root, files)
			}
			maps.Copy(a, affected(base.repo, files, refs))
		}
		// A layer on one side only is rendered whole.
		baseLayers, headLayers := base.layers(), head.layers()
		for name := range baseLayers {
			if !headLayers[name] {
				a[name] = true
			}
		}
		for name := range headLayers {
			if !baseLayers[name] {
				a[name] = true
			}
		}
		want = func(name string) bool { return a[name] }
	}
	strip := append(slices.Clone(DefaultStripAttrs), cfg.strip...)
	pairs, err := renderPairs(ctx, base, head, want)
	if err != nil {
		return nil, err
	}
	r.NotRendered = notRendered(base.failed, head.failed)
	r.Objects = DiffObjects(pairs.base, pairs.head, strip)
	r.Images = diffImageIndexes(&pairs.baseImages, &pairs.headImages)
	rendered := map[string]bool{}
	for _, s := range []*side{base, head} {
		for p := range s.rendered {
			_, bf := base.failed[p]
			_, hf := head.failed[p]
			rendered[p] = !bf && !hf
		}
	}
	for p, ok := range rendered {
		if ok {
			r.Rendered = append(r.Rendered, p)
		}
	}
	slices.Sort(r.Rendered)
	r.Skipped = skipped(base, head)
	for _, s := range []*side{base, head} {
		for _, u := range s.unresolved {
			if !slices.Contains(r.Unresolved, u) {
				r.Unresolved = append(r.Unresolved, u)
			}
		}
	}
	slices.Sort(r.Unresolved)
	lints.Wait()
	if err := cmp.Or(blErr, hlErr); err != nil {
		return nil, err
	}
	base.paths.findings(bl)
	head.paths.findings(hl)
	r.Findings = DiffFindings(bl, hl)
	// A finding of a layer one side does not know (unknownOn) is neither
	// fixed nor introduced by the change: that side says nothing of it.
	r.Findings.Fixed = slices.DeleteFunc(r.Findings.Fixed, func(f lint.Finding) bool { return head.unknown[f.Layer] != "" })
	r.Findings.Introduced = slices.DeleteFunc(r.Findings.Introduced, func(f lint.Finding) bool { return base.unknown[f.Layer] != "" })
	r.Bootstrap = diffBootstrap(base.planKeeping(head), head.planKeeping(base))
	return r, nil
}

// notRendered lists the producers that did not render on a side, from
// why each did not on the base and on the head, sorted.
func notRendered(base, head map[string]string) []NotRendered {
	var out []NotRendered
	for p, bwhy := range base {
		hwhy, both := head[p]
		nr := NotRendered{Producer: p, Side: "base", Reason: bwhy}
		if both {
			nr.Side = "both"
			if hwhy != bwhy {
				nr.Reason = bwhy + "; head: " + hwhy
			}
		}
		out = append(out, nr)
	}
	for p, why := range head {
		if _, both := base[p]; !both {
			out = append(out, NotRendered{Producer: p, Side: "head", Reason: why})
		}
	}
	slices.SortFunc(out, func(a, b NotRendered) int { return cmp.Compare(a.Producer, b.Producer) })
	return out
}

// readPartly returns the layers of layers that repo read, in part, for
// their objects' identities only (fluxrepo.WithIdentityOnly).
func readPartly(repo *fluxrepo.Repository, layers map[string]bool) map[string]bool {
	out := map[string]bool{}
	for i, l := range repo.Plan.Layers {
		if layers[l.Name] && slices.ContainsFunc(repo.Inputs[i].Objects, func(o *fluxbuild.Object) bool { return o.IdentityOnly }) {
			out[l.Name] = true
		}
	}
	return out
}

// side is one tree of a comparison.
type side struct {
	repo     *fluxrepo.Repository // nil when the entry point is not there
	lintOpts []lint.Option        // lint's options, the same on every side
	rendered map[string]bool      // producers rendered, or tried
	failed   map[string]string    // producer → why it did not render
	// unknown are the layers of the other side this side does not have,
	// and cannot tell it does not (unknownOn): layer → why.
	unknown    map[string]string
	unresolved []string  // substituteFrom sources stood in for
	paths      rootPaths // rewrites the root's paths in messages
	// releases are the HelmReleases the rendered layers apply, as
	// rendered (their names substituted), by layer.
	releases map[string][]*renderedRelease
}

// renderedRelease is a HelmRelease a rendered layer applies, and the
// producer its release is named by once its chart is rendered ("" until
// then).
type renderedRelease struct {
	obj      Object
	producer string
}

func readSide(ctx context.Context, root, entry string, opts []fluxrepo.Option, lintOpts []lint.Option) (*side, error) {
	s := &side{lintOpts: lintOpts, rendered: map[string]bool{}, failed: map[string]string{}, unknown: map[string]string{}, releases: map[string][]*renderedRelease{}, paths: newRootPaths(root)}
	p := filepath.Join(root, filepath.FromSlash(entry))
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	repo, err := fluxrepo.Read(ctx, p, append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, opts...)...)
	if err != nil {
		return nil, err
	}
	s.repo = repo
	return s, nil
}

func (s *side) close() {
	if s.repo != nil {
		_ = s.repo.Close()
	}
}

func (s *side) layers() map[string]bool {
	out := map[string]bool{}
	if s.repo != nil {
		for _, l := range s.repo.Plan.Layers {
			out[l.Name] = true
		}
	}
	return out
}

// layerRender is what rendering a layer of a side gave (renderOf), before
// the side records it (record).
type layerRender struct {
	producer   string // "" when the side has no such layer rendered by kustomize
	out        []byte // what it rendered
	failed     string // why it did not render (unrendered)
	unrendered bool
	unresolved []string // sources stood in for (RenderUnresolved)
	err        error    // what stops the review (ctx done)
	objs       []Object // out parsed (renderPairs), or why it does not parse
	parseErr   error
}

// renderOf renders the layer name of a repository side, as
// kustomize-controller would apply it. It only reads the side, so that
// the layers of both sides render at once (renderPairs).
func (s *side) renderOf(ctx context.Context, name string, opts ...substitute.RenderOption) layerRender {
	if s.repo == nil {
		return layerRender{}
	}
	i := slices.IndexFunc(s.repo.Plan.Layers, func(l layering.Layer) bool { return l.Name == name })
	if i < 0 || s.repo.Plan.Layers[i].HelmRelease != nil {
		return layerRender{} // not on this side, or a HelmRelease layer of a stack: a release
	}
	r := layerRender{producer: s.repo.Plan.KustomizationRef(name)}
	if in := s.repo.Inputs[i]; in.Source == nil {
		r.failed, r.unrendered = s.paths.rel(in.Unavailable), true
		return r
	}
	out, unresolved, err := s.repo.RenderUnresolved(ctx, name, opts...)
	r.unresolved = unresolved
	switch {
	case err != nil && ctx.Err() != nil:
		r.err = ctx.Err()
	case err != nil:
		r.failed, r.unrendered = s.paths.rel(err.Error()), true
	default:
		r.out = out
	}
	return r
}

// record records that a layer was rendered on the side, or why not, and
// returns its producer and output (nil when it did not render).
func (s *side) record(r layerRender) (string, []byte, error) {
	if r.err != nil {
		return "", nil, r.err
	}
	if r.producer == "" {
		return "", nil, nil
	}
	s.rendered[r.producer] = true
	for _, u := range r.unresolved {
		if !slices.Contains(s.unresolved, u) {
			s.unresolved = append(s.unresolved, u)
		}
	}
	if r.unrendered {
		s.failed[r.producer] = r.failed
		return r.producer, nil, nil
	}
	return r.producer, r.out, nil
}

// parse parses what a producer rendered on a side; a producer that does
// not parse did not render.
func (s *side) parse(producer string, out []byte) []Object {
	if out == nil {
		return nil
	}
	objs, err := ParseObjects(producer, out)
	if err != nil {
		s.failed[producer] = err.Error()
		return nil
	}
	return objs
}

// renderWindow renders the layers names of both sides at once, base and
// head of names[i] at 2i and 2i+1: a layer's objects render on every core
// too, but one large object (a dashboard's ConfigMap) holds its layer up.
// The head's layers are started first, so that the base meets what the
// head made of the objects they share in memo. Then it parses every
// output at once: the head's, and the base's where it differs (the same
// on both sides is parsed once, as the head's).
func renderWindow(ctx context.Context, base, head *side, names []string, memo substitute.RenderOption) []layerRender {
	renders := make([]layerRender, 2*len(names))
	parallel.For(len(renders), func(k int) {
		if k < len(names) {
			renders[2*k+1] = head.renderOf(ctx, names[k], memo)
		} else {
			renders[2*(k-len(names))] = base.renderOf(ctx, names[k-len(names)], memo)
		}
	})
	parallel.For(len(renders), func(k int) {
		r := &renders[k]
		b, h := &renders[k&^1], &renders[k|1] // the layer's base and head (only out and producer are read)
		if r.err != nil || r.unrendered || r.out == nil || r == b && bytes.Equal(b.out, h.out) {
			return
		}
		r.objs, r.parseErr = ParseObjects(cmp.Or(h.producer, b.producer), r.out)
	})
	return renders
}

// parsed is parse of what renderWindow parsed for the side.
func (s *side) parsed(producer string, r layerRender) []Object {
	if r.parseErr != nil {
		s.failed[producer] = r.parseErr.Error()
		return nil
	}
	return r.objs
}

// keepReleases records the HelmReleases of what the layer rendered.
func (s *side) keepReleases(layer string, objs []Object) {
	for _, o := range objs {
		if o.ID.Kind == "HelmRelease" && strings.HasPrefix(o.ID.Group, "helm.toolkit.fluxcd.io") {
			s.releases[layer] = append(s.releases[layer], &renderedRelease{obj: o})
		}
	}
}

// varRef matches a ${var} (or $var) in a name as written; compiled on
// first use, as every command pays for package inits.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{[^}]*\}|\$[_[:alpha:]][_[:alpha:][:digit:]]*`)
})

// releaseProducers names the producer of each release: lint renders a
// HelmRelease as written, so one named ${APP} in a folder four
// Kustomizations apply is four releases with one name. Each is named as
// its layer rendered it, its variables substituted (the one HelmRelease
// of its layer that the name as written matches). A name that cannot be
// substituted (its variable given by no source in the tree), and a name
// two releases share, is followed by its layer: distinct releases are
// never one producer.
func (s *side) releaseProducers(rels []charts.Rendered) []string {
	out := make([]string, len(rels))
	claimed := make([]*renderedRelease, len(rels))
	for i, rr := range rels {
		out[i] = rr.Ref.String()
		var found []*renderedRelease
		for _, r := range s.releases[rr.Layer] {
			if !slices.Contains(claimed, r) && matchWritten(rr.Ref.Name, r.obj.ID.Name) && (r.obj.ID.Namespace == "" || matchWritten(rr.Ref.Namespace, r.obj.ID.Namespace)) {
				found = append(found, r)
			}
		}
		if len(found) == 1 {
			claimed[i] = found[0]
		}
		if !strings.Contains(out[i], "$") {
			continue
		}
		var ref layering.ObjectRef
		if claimed[i] != nil {
			id := claimed[i].obj.ID
			ref = layering.ObjectRef{Kind: rr.Ref.Kind, Namespace: cmp.Or(id.Namespace, rr.Ref.Namespace), Name: id.Name}
		}
		if claimed[i] == nil || strings.Contains(ref.String(), "$") {
			out[i] += " (layer " + rr.Layer + ")"
			continue
		}
		out[i] = ref.String()
	}
	count := map[string]int{}
	for _, p := range out {
		count[p]++
	}
	for i, p := range out {
		if count[p] > 1 {
			out[i] = p + " (layer " + rels[i].Layer + ")"
		}
		if claimed[i] != nil {
			claimed[i].producer = out[i]
		}
	}
	return out
}

// matchWritten reports whether name, as rendered, is what written (a name
// as the file holds it, with ${var}s) becomes once substituted.
func matchWritten(written, name string) bool {
	if !strings.Contains(written, "$") {
		return written == name
	}
	parts := varRef().Split(written, -1)
	for j, p := range parts {
		parts[j] = regexp.QuoteMeta(p)
	}
	ok, _ := regexp.MatchString("^"+strings.Join(parts, ".*")+"$", name)
	return ok
}

// renderReleases renders the HelmReleases of the layers want names, as
// helm-controller would install them.
func (s *side) renderReleases(ctx context.Context, want func(string) bool) ([]charts.Rendered, error) {
	if s.repo == nil || !s.hasReleases(want) {
		return nil, nil
	}
	return lint.Releases(ctx, s.repo.Plan, s.repo.Inputs, s.repo.Root, want, s.lintOpts, fluxbuild.WithRedactedSecrets())
}

// parseReleases returns the objects of rendered releases by producer
// (names, releaseProducers'), and the producers in order.
func (s *side) parseReleases(rels []charts.Rendered, names []string) (map[string][]Object, []string, error) {
	out := map[string][]Object{}
	var order []string
	for i, rr := range rels {
		producer := names[i]
		s.rendered[producer] = true
		order = append(order, producer)
		if rr.Err != nil {
			s.failed[producer] = s.paths.rel(rr.Err.Error())
			continue
		}
		objs, err := ParseObjects(producer, rr.Release.Manifest)
		if err != nil {
			s.failed[producer] = err.Error()
			continue
		}
		for _, c := range rr.Release.CRDs {
			data, err := yaml.Marshal(c.Node)
			if err != nil {
				return nil, nil, err
			}
			crd, err := ParseObjects(producer, data)
			if err != nil {
				s.failed[producer] = err.Error()
				continue
			}
			objs = append(objs, crd...)
		}
		for i := range objs {
			if objs[i].ID.Namespace == "" && !clusterScoped(objs[i]) {
				objs[i].ID.Namespace = rr.Release.Namespace
			}
		}
		out[producer] = append(out[producer], objs...)
	}
	return out, order, nil
}

// borrowNames names a release whose layer did not render on its side
// (so its name, with a ${var}, could not be substituted there) as the
// other side names the same release, so the two sides pair it.
func borrowNames(a *side, arels []charts.Rendered, anames []string, b *side, brels []charts.Rendered, bnames []string) {
	for _, x := range []struct {
		s      *side
		rels   []charts.Rendered
		names  []string
		other  *side
		orels  []charts.Rendered
		onames []string
	}{{a, arels, anames, b, brels, bnames}, {b, brels, bnames, a, arels, anames}} {
		for i, rr := range x.rels {
			if len(x.s.releases[rr.Layer]) > 0 || !strings.Contains(rr.Ref.String(), "$") || len(x.other.releases[rr.Layer]) == 0 {
				continue
			}
			for j, or := range x.orels {
				if or.Layer == rr.Layer && or.Ref == rr.Ref {
					x.names[i] = x.onames[j]
					break
				}
			}
		}
	}
}

// hasReleases reports whether a layer want names applies a HelmRelease
// (or is one): rendering releases loads the whole tree for lint, which a
// change that reaches none of them need not pay.
func (s *side) hasReleases(want func(string) bool) bool {
	for i, l := range s.repo.Plan.Layers {
		if !want(l.Name) {
			continue
		}
		if l.HelmRelease != nil {
			return true
		}
		for _, o := range s.repo.Inputs[i].Objects {
			if o.Kind == "HelmRelease" {
				return true
			}
		}
	}
	return false
}

// pairs is what the two sides render, producer by producer, less the
// objects a producer renders the same on both: the full diff holds one
// producer's objects at a time, not both trees' (issue 28's memory goal).
type pairs struct {
	base, head             []Object
	baseImages, headImages imageIndex
}

// renderPairs renders, on both sides, every producer want names (the
// Kustomization layers, then their HelmReleases) and keeps the objects
// that differ; a producer that does not render on either side is left
// out on both.
func renderPairs(ctx context.Context, base, head *side, want func(string) bool) (*pairs, error) {
	p := &pairs{}
	var names []string
	seen := map[string]bool{}
	for _, sd := range []*side{head, base} {
		if sd.repo == nil {
			continue
		}
		for _, l := range sd.repo.Plan.Layers {
			if !seen[l.Name] && want(l.Name) {
				seen[l.Name] = true
				names = append(names, l.Name)
			}
		}
	}
	// The layers render a window at a time (renderWindow), so that their
	// outputs are not all held at once; the base's objects of the files a
	// change leaves alone are taken from what the head's made of them.
	memo := substitute.WithRenderMemo(&substitute.RenderMemo{})
	window := 8 * runtime.GOMAXPROCS(0)
	leftOut := map[string]bool{} // layers that did not render on a side
	var renders []layerRender
	for n, name := range names {
		if n%window == 0 {
			renders = renderWindow(ctx, base, head, names[n:min(n+window, len(names))], memo)
		}
		br, hr := renders[2*(n%window)], renders[2*(n%window)+1]
		bp, bo, err := base.record(br)
		if err != nil {
			return nil, err
		}
		hp, ho, err := head.record(hr)
		if err != nil {
			return nil, err
		}
		producer := cmp.Or(hp, bp)
		unknownOn(base, head, name, producer, hp == "", bp == "")
		if bo != nil && bytes.Equal(bo, ho) {
			// The same on both sides: parsed once, for its images.
			objs := head.parsed(producer, hr)
			if why, ok := head.failed[producer]; ok {
				base.failed[producer] = why
			}
			p.baseImages.add(objs)
			p.headImages.add(objs)
			base.keepReleases(name, objs)
			head.keepReleases(name, objs)
			gen, order := head.generate(ho)
			for _, rs := range order {
				base.rendered[rs] = true
				if why, ok := head.failed[rs]; ok {
					base.failed[rs] = why
					continue
				}
				p.baseImages.add(gen[rs])
				p.headImages.add(gen[rs])
				base.keepReleases(name, gen[rs])
				head.keepReleases(name, gen[rs])
			}
			continue
		}
		bobjs, hobjs := base.parsed(producer, br), head.parsed(producer, hr)
		base.keepReleases(name, bobjs)
		head.keepReleases(name, hobjs)
		_, bf := base.failed[producer]
		_, hf := head.failed[producer]
		if bf || hf {
			// Left out on both sides, so are the images its releases'
			// values name (its releases still name the other side's).
			leftOut[name] = true
		}
		p.add(base, head, producer, bobjs, hobjs)
		p.addGenerated(base, head, name, producer, bo, ho)
	}
	brels, err := base.renderReleases(ctx, want)
	if err != nil {
		return nil, err
	}
	hrels, err := head.renderReleases(ctx, want)
	if err != nil {
		return nil, err
	}
	bnames, hnames := base.releaseProducers(brels), head.releaseProducers(hrels)
	borrowNames(base, brels, bnames, head, hrels, hnames)
	brel, border, err := base.parseReleases(brels, bnames)
	if err != nil {
		return nil, err
	}
	hrel, horder, err := head.parseReleases(hrels, hnames)
	if err != nil {
		return nil, err
	}
	// The releases of a layer one side does not know are not known there.
	for _, x := range []struct {
		s, other *side
		rels     []charts.Rendered
		names    []string
	}{{base, head, brels, bnames}, {head, base, hrels, hnames}} {
		for i, rr := range x.rels {
			if why, ok := x.other.unknown[rr.Layer]; ok {
				x.other.rendered[x.names[i]] = true
				x.other.failed[x.names[i]] = why
			}
		}
	}
	done := map[string]bool{}
	for _, producer := range slices.Concat(horder, border) {
		if !done[producer] {
			done[producer] = true
			p.add(base, head, producer, brel[producer], hrel[producer])
		}
	}
	// A HelmRelease whose chart did not render on a side is compared by
	// the images its values name, on both sides.
	for _, x := range []struct {
		s   *side
		idx *imageIndex
	}{{base, &p.baseImages}, {head, &p.headImages}} {
		for layer, rs := range x.s.releases {
			if leftOut[layer] {
				continue
			}
			for _, r := range rs {
				_, bf := base.failed[r.producer]
				_, hf := head.failed[r.producer]
				if bf || hf || !x.s.rendered[r.producer] {
					x.idx.addValues(r.obj)
				}
			}
		}
	}
	sortObjects(p.base)
	sortObjects(p.head)
	return p, nil
}

// unknownOn records a layer (producer) that one side does not have (the
// base without it when noBase, the head when noHead) as not rendered
// there when the other side's ResourceSet that generates it did not
// render on that side: its inputs, say, come from a provider there, so
// whether it generates the layer is not known, and the layer's objects
// are not shown as added or removed.
func unknownOn(base, head *side, name, producer string, noHead, noBase bool) {
	for _, x := range []struct {
		missing bool
		s, has  *side
	}{{noBase, base, head}, {noHead, head, base}} {
		if !x.missing {
			continue
		}
		var why string
		if rs := x.has.generatedBy(name); rs != "" && x.s.failed[rs] != "" {
			why = "the ResourceSet that generates it, " + rs + ", did not render"
		} else if k, unread := x.s.failedParent(x.has, name); k != "" {
			why = parentFailed(k, unread)
		} else {
			continue
		}
		x.s.rendered[producer] = true
		x.s.failed[producer] = why
		x.s.unknown[name] = why
	}
}

// parentFailed is why a layer one side does not have is not rendered
// there when the Kustomization k that applies it did not build or render
// on that side, or, unread, could not be read offline (failedParent);
// appliedByFailed reads k back.
func parentFailed(k string, unread bool) string {
	if unread {
		return parentFailedPrefix + k + parentUnreadSuffix
	}
	return parentFailedPrefix + k + parentFailedSuffix
}

const (
	parentFailedPrefix = "the Kustomization that applies it, "
	parentFailedSuffix = ", did not build or render: Flux applies and prunes nothing of it, so this Kustomization stays as the cluster has it, and what it applies from this revision is not shown"
	parentUnreadSuffix = ", is not read offline: what it applies there is not known"
)

// appliedByFailed returns the Kustomization a parentFailed reason names,
// and whether it was unread rather than failing.
func appliedByFailed(why string) (k string, unread, ok bool) {
	k, ok = strings.CutPrefix(why, parentFailedPrefix)
	if !ok {
		return "", false, false
	}
	if k, ok := strings.CutSuffix(k, parentUnreadSuffix); ok {
		return k, true, true
	}
	k, ok = strings.CutSuffix(k, parentFailedSuffix)
	return k, false, ok
}

// failedParent names the Kustomization (Kustomization/NAMESPACE/NAME)
// that applies the layer name of the side has, directly or through layers
// s does not have either, when s has it and it did not build or render on
// s (kustomize-controller then applies nothing of that Kustomization, nor
// prunes: the layers it applied stay as they were), or could not be read
// offline (unread: what it applies there is not known); "" otherwise.
// Either way s not having those layers says nothing of them.
func (s *side) failedParent(has *side, name string) (k string, unread bool) {
	if s.repo == nil || has.repo == nil {
		return "", false
	}
	layers := has.repo.Plan.Layers
	seen := map[string]bool{}
	for cur := name; !seen[cur]; {
		seen[cur] = true
		i := slices.IndexFunc(layers, func(l layering.Layer) bool { return l.Name == cur })
		if i < 0 || layers[i].Parent == "" {
			return "", false
		}
		cur = layers[i].Parent
		j := slices.IndexFunc(s.repo.Plan.Layers, func(l layering.Layer) bool { return l.Name == cur })
		if j < 0 {
			continue // not on s either: its parent decides
		}
		k := s.repo.Plan.KustomizationRef(cur)
		in := s.repo.Inputs[j]
		switch {
		case in.Source == nil:
			return k, true
		case in.BuildErr != nil || s.failed[k] != "":
			return k, false
		}
		return "", false
	}
	return "", false
}

// generatedBy names the ResourceSet (ResourceSet/NAMESPACE/NAME) whose
// templates make the Kustomization of the layer name, or "" when no
// ResourceSet makes it.
func (s *side) generatedBy(name string) string {
	if s.repo == nil {
		return ""
	}
	layers := s.repo.Plan.Layers
	i := slices.IndexFunc(layers, func(l layering.Layer) bool { return l.Name == name })
	if i < 0 || layers[i].Kustomization == nil {
		return ""
	}
	j := slices.IndexFunc(layers, func(l layering.Layer) bool { return l.Name == layers[i].Parent })
	if j < 0 {
		return ""
	}
	ks, objs := layers[i].Kustomization, s.repo.Inputs[j].Objects
	for _, k := range objs {
		if k.Kind != "Kustomization" || k.Name != ks.Name || k.Namespace != ks.Namespace {
			continue
		}
		for _, o := range objs {
			if o.Kind == "ResourceSet" && o.Group() == "fluxcd.controlplane.io" && o.File == k.File && o.Line == k.Line {
				return "ResourceSet/" + namespaceOr(o.Namespace, fluxrepo.DefaultNamespace) + "/" + o.Name
			}
		}
	}
	return ""
}

// addGenerated keeps, as add does, the objects the ResourceSets of a layer
// (producer, which rendered bo on the base and ho on the head) generate:
// each ResourceSet is a producer (ResourceSet/NAMESPACE/NAME), so a change
// to its templates or inputs is a change to the objects it generates. On
// a side where the layer did not render, its ResourceSets did not either.
func (p *pairs) addGenerated(base, head *side, layer, producer string, bo, ho []byte) {
	bgen, border := base.generate(bo)
	hgen, horder := head.generate(ho)
	done := map[string]bool{}
	for _, rs := range slices.Concat(horder, border) {
		if done[rs] {
			continue
		}
		done[rs] = true
		for _, s := range []*side{base, head} {
			if _, failed := s.failed[producer]; failed {
				s.rendered[rs] = true
				s.failed[rs] = "its layer " + producer + " did not render"
			}
		}
		base.keepReleases(layer, bgen[rs])
		head.keepReleases(layer, hgen[rs])
		p.add(base, head, rs, bgen[rs], hgen[rs])
	}
}

// generate returns the objects each ResourceSet of what a layer rendered
// (out) generates, by producer (ResourceSet/NAMESPACE/NAME), and the
// producers in order; it records them rendered, and why one whose objects
// are not known (inputs from providers, templates that do not render)
// did not.
func (s *side) generate(out []byte) (map[string][]Object, []string) {
	if out == nil {
		return nil, nil
	}
	gens, err := fluxrepo.ExpandResourceSets(out)
	if err != nil {
		return nil, nil // the layer itself does not parse: it did not render
	}
	objs := map[string][]Object{}
	var order []string
	for _, g := range gens {
		if slices.Contains(order, g.ResourceSet) {
			continue // the same ResourceSet twice: kustomize refuses it
		}
		s.rendered[g.ResourceSet] = true
		order = append(order, g.ResourceSet)
		if g.Err != nil {
			s.failed[g.ResourceSet] = s.paths.rel(g.Err.Error())
			continue
		}
		objs[g.ResourceSet] = s.parse(g.ResourceSet, g.Objects)
	}
	return objs, order
}

// add keeps the objects of one producer that are not the same on both
// sides, and indexes the images of all of them.
func (p *pairs) add(base, head *side, producer string, bo, ho []Object) {
	_, bf := base.failed[producer]
	_, hf := head.failed[producer]
	if producer == "" || bf || hf {
		return
	}
	p.baseImages.add(bo)
	p.headImages.add(ho)
	byID := make(map[ObjectID]int, len(ho))
	for i, o := range ho {
		byID[o.ID] = i
	}
	same := make([]bool, len(ho))
	for _, o := range bo {
		if i, ok := byID[o.ID]; ok && !same[i] && reflect.DeepEqual(o.Value, ho[i].Value) {
			same[i] = true
			continue
		}
		p.base = append(p.base, o)
	}
	for i, o := range ho {
		if !same[i] {
			p.head = append(p.head, o)
		}
	}
}

// skipped counts the producers of the two sides that were neither
// rendered nor tried: the Kustomizations of the layers no changed file
// feeds, and the HelmReleases and ResourceSets they apply.
func skipped(base, head *side) int {
	seen := map[string]bool{}
	for _, s := range []*side{base, head} {
		if s.repo == nil {
			continue
		}
		for i, l := range s.repo.Plan.Layers {
			if l.HelmRelease != nil {
				continue
			}
			k := s.repo.Plan.KustomizationRef(l.Name)
			if base.rendered[k] || head.rendered[k] {
				continue
			}
			seen[k] = true
			for _, o := range s.repo.Inputs[i].Objects {
				switch {
				case o.Kind == "HelmRelease":
					seen[k+" "+o.Namespace+"/"+o.Name] = true
				case o.Kind == "ResourceSet" && o.Group() == "fluxcd.controlplane.io":
					ns := namespaceOr(o.Namespace, namespaceOr(l.Kustomization.Spec.TargetNamespace, fluxrepo.DefaultNamespace))
					seen["ResourceSet/"+ns+"/"+o.Name] = true
				}
			}
		}
	}
	return len(seen)
}

func (s *side) lint(ctx context.Context) (*lint.Report, error) {
	if s.repo == nil {
		return &lint.Report{}, nil
	}
	return lint.Repository(ctx, s.repo, s.lintOpts...)
}

func (s *side) plan() *planView {
	if s.repo == nil {
		return nil
	}
	return &planView{s.repo.Plan}
}

// planKeeping is the side's plan with the layers of other that the side
// does not know (unknownOn) kept as other has them: the cluster keeps a
// Kustomization that the one applying it, failing there, leaves alone, so
// the bootstrap order still holds it.
func (s *side) planKeeping(other *side) *planView {
	v := s.plan()
	if v == nil || len(s.unknown) == 0 || other.repo == nil {
		return v
	}
	p := *v.p
	p.Layers = slices.Clone(p.Layers)
	for _, l := range other.repo.Plan.Layers {
		if s.unknown[l.Name] != "" {
			p.Layers = append(p.Layers, l)
		}
	}
	return &planView{&p}
}

// clusterScoped reports whether helm-controller would apply o without a
// namespace: the kinds Kubernetes defines as cluster-scoped, and, for
// custom resources, kinds named Cluster… (ClusterIssuer,
// ClusterSecretStore), as operators name them.
func clusterScoped(o Object) bool {
	return kinds.ClusterScoped(o.ID.Kind) || strings.HasPrefix(o.ID.Kind, "Cluster")
}
