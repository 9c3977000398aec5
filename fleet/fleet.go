package fleet

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
)

// ClusterPlaceholder is what a fleet's artifact URL template holds for the
// cluster's name: oci://registry.example.com/platform/{{cluster}}:main, or
// one repository with a tag per cluster, oci://registry.example.com/platform:{{cluster}}.
const ClusterPlaceholder = "{{cluster}}"

// Fleet is one stack on many clusters: each cluster gets the stack's
// layers, with its own IaC outputs, its own artifact and the few
// differences real fleets have (layers off, a layer's interval, timeout or
// patches, extra variables, extra layers). Build one with New and
// Cluster, or Load from a fleet file (kind Fleet); like a Builder it
// never panics, and Check (or Stack) returns every problem.
type Fleet struct {
	name     string
	file     string // the fleet file, for errors; "" for a fleet built in Go
	stack    func() (*layering.Builder, error)
	artifact string
	clusters []*clusterSpec
	errs     []error
}

// clusterSpec is one cluster of a Fleet.
type clusterSpec struct {
	name       string
	file       string
	line       int
	artifact   string
	outputs    string
	disable    []string
	overrides  []layerOverride
	substitute map[string]string
	extra      []extraLayer
	errs       []error
}

type layerOverride struct {
	layer string
	opts  []layering.StepOption
}

type extraLayer struct {
	name string
	line int
	opts []layering.StepOption
}

// ClusterOption configures one cluster of a Fleet. Only this package
// implements it.
type ClusterOption interface{ applyToCluster(*clusterSpec) }

type funcCluster func(*clusterSpec)

func (f funcCluster) applyToCluster(c *clusterSpec) { f(c) }

// New starts a fleet called name. stack makes the stack every cluster
// runs, afresh for each (say stackfile.Once("stack.yaml")); artifact is the URL each cluster's artifact is
// pushed to, with ClusterPlaceholder for the cluster's name (a cluster may
// set its own with ClusterArtifact).
func New(name string, stack func() (*layering.Builder, error), artifact string) *Fleet {
	f := &Fleet{name: name, stack: stack, artifact: artifact}
	if stack == nil {
		f.errs = append(f.errs, errdefs.Kind(layering.ErrInvalidOption, "fleet %q: no stack", name))
	}
	if msg := nameProblem(name); msg != "" {
		f.errs = append(f.errs, errdefs.Kind(layering.ErrInvalidName, "fleet %q: %s", name, msg))
	}
	return f
}

// Cluster adds a cluster running the fleet's stack, as opts change it.
func (f *Fleet) Cluster(name string, opts ...ClusterOption) *Fleet {
	f.addCluster(name, "", 0, opts)
	return f
}

func (f *Fleet) addCluster(name, file string, line int, opts []ClusterOption) *clusterSpec {
	c := &clusterSpec{name: name, file: file, line: line}
	for _, o := range opts {
		if o == nil {
			c.errs = append(c.errs, errdefs.Kind(layering.ErrInvalidOption, "nil ClusterOption"))
			continue
		}
		o.applyToCluster(c)
	}
	f.clusters = append(f.clusters, c)
	return c
}

// ClusterArtifact sets the cluster's artifact URL instead of the fleet's
// template.
func ClusterArtifact(url string) ClusterOption {
	return funcCluster(func(c *clusterSpec) { c.artifact = url })
}

// ClusterOutputs reads the stack's vars entry from this IaC outputs file
// (the stack must have exactly one vars entry), as WithOutputs does.
func ClusterOutputs(file string) ClusterOption {
	return funcCluster(func(c *clusterSpec) {
		if file == "" {
			c.errs = append(c.errs, errdefs.Kind(layering.ErrInvalidOption, "ClusterOutputs: empty file name"))
			return
		}
		c.outputs = file
	})
}

// Disable leaves layers out of the cluster. A layer that depends on one of
// them depends on what it depended on instead, so the order holds.
func Disable(layers ...string) ClusterOption {
	return funcCluster(func(c *clusterSpec) { c.disable = append(c.disable, layers...) })
}

// Override applies opts to one of the stack's layers on this cluster (its
// Interval, Timeout, Patches, say).
func Override(layer string, opts ...layering.StepOption) ClusterOption {
	return funcCluster(func(c *clusterSpec) { c.overrides = append(c.overrides, layerOverride{layer, opts}) })
}

// ExtraVars adds postBuild substitute values to every layer of the cluster
// (a layer's own values of the same name win).
func ExtraVars(vars map[string]string) ClusterOption {
	return funcCluster(func(c *clusterSpec) {
		if c.substitute == nil {
			c.substitute = map[string]string{}
		}
		maps.Copy(c.substitute, vars)
	})
}

// ExtraLayer adds a layer to the cluster only, after the stack's.
func ExtraLayer(name string, opts ...layering.StepOption) ClusterOption {
	return funcCluster(func(c *clusterSpec) { c.extra = append(c.extra, extraLayer{name: name, opts: opts}) })
}

// Name is the fleet's name.
func (f *Fleet) Name() string { return f.name }

// File is the fleet file the Fleet was read from ("" for one made in Go).
func (f *Fleet) File() string { return f.file }

// Where is where cluster is declared in the fleet file (its file and
// line), or the fleet's file and 0 for a cluster it does not declare.
func (f *Fleet) Where(cluster string) (file string, line int) {
	if c, err := f.cluster(cluster); err == nil {
		return c.file, c.line
	}
	return f.file, 0
}

// Clusters are the clusters' names, in declaration order.
func (f *Fleet) Clusters() []string {
	names := make([]string, len(f.clusters))
	for i, c := range f.clusters {
		names[i] = c.name
	}
	return names
}

// Err returns the fleet's own problems (a fleet file that does not parse,
// no clusters), without resolving or building any cluster's stack: Check
// does both.
func (f *Fleet) Err() error {
	errs := slices.Clone(f.errs)
	if len(f.clusters) == 0 {
		errs = append(errs, errdefs.Kind(layering.ErrInvalidOption, "fleet %q: no clusters", f.name))
	}
	return joinErrs(errs)
}

// Check returns every problem of the fleet and of each cluster's stack, as
// Build would, or nil.
func (f *Fleet) Check() error {
	errs := slices.Clone(f.errs)
	if len(f.clusters) == 0 {
		errs = append(errs, errdefs.Kind(layering.ErrInvalidOption, "fleet %q: no clusters", f.name))
	}
	for _, c := range f.clusters {
		if _, err := f.Stack(c.name); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrs(errs)
}

// ClusterError is a problem of one cluster of a fleet.
type ClusterError struct {
	Cluster string
	File    string // the fleet file and the cluster's line, when known
	Line    int
	Err     error
}

func (e *ClusterError) Error() string {
	where := ""
	if e.File != "" {
		where = e.File + ":"
		if e.Line > 0 {
			where += fmt.Sprintf("%d:", e.Line)
		}
		where += " "
	}
	return fmt.Sprintf("%scluster %q: %v", where, e.Cluster, e.Err)
}

func (e *ClusterError) Unwrap() error { return e.Err }

func (f *Fleet) cluster(name string) (*clusterSpec, error) {
	var found *clusterSpec
	for _, c := range f.clusters {
		if c.name != name {
			continue
		}
		if found != nil {
			return nil, &ClusterError{Cluster: name, File: c.file, Line: c.line,
				Err: errdefs.Kind(layering.ErrDuplicateLayer, "declared twice (first at line %d)", found.line)}
		}
		found = c
	}
	if found == nil {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "fleet %q has no cluster %q", f.name, name)
	}
	return found, nil
}

// Artifact is the URL the cluster's artifact is pushed to.
func (f *Fleet) Artifact(cluster string) (string, error) {
	c, err := f.cluster(cluster)
	if err != nil {
		return "", err
	}
	return c.artifactURL(f.artifact)
}

func (c *clusterSpec) artifactURL(template string) (string, error) {
	u := c.artifact
	if u == "" {
		if template == "" {
			return "", c.errorf(layering.ErrInvalidOption, "no artifact URL: set the fleet's or the cluster's")
		}
		if !strings.Contains(template, ClusterPlaceholder) {
			return "", c.errorf(layering.ErrInvalidOption, "the fleet's artifact URL %q has no %s: every cluster would push to one tag", template, ClusterPlaceholder)
		}
		u = strings.ReplaceAll(template, ClusterPlaceholder, c.name)
	}
	if !strings.HasPrefix(u, "oci://") {
		return "", c.errorf(layering.ErrInvalidOption, "invalid artifact URL %q: want oci://HOST/REPOSITORY:TAG", u)
	}
	if _, tag := layering.SplitTag(u); tag == "" {
		return "", c.errorf(layering.ErrInvalidOption, "artifact URL %q has no tag", u)
	}
	return u, nil
}

func (c *clusterSpec) errorf(kind error, format string, args ...any) error {
	return &ClusterError{Cluster: c.name, File: c.file, Line: c.line, Err: errdefs.Kind(kind, format, args...)}
}

// Stack returns the cluster's stack: the fleet's, with the cluster's
// artifact as its OCIRepository (when the stack has its own), its outputs
// file, its layers off or changed, its variables and its extra layers.
// Every problem is returned, each naming the cluster.
func (f *Fleet) Stack(cluster string) (*layering.Builder, error) {
	b, err := f.Resolve(cluster)
	if err != nil {
		return nil, err
	}
	if _, err := b.Build(); err != nil {
		c, _ := f.cluster(cluster)
		return nil, &ClusterError{Cluster: c.name, File: c.file, Line: c.line, Err: err}
	}
	return b, nil
}

// Resolve is Stack without the stack's own Build problems, which a linter
// reports as findings (Builder.Draft): an unknown cluster, a layer to
// disable or override that the stack lacks, or a bad artifact URL is still
// an error.
func (f *Fleet) Resolve(cluster string) (*layering.Builder, error) {
	c, err := f.cluster(cluster)
	if err != nil {
		return nil, err
	}
	var errs []error
	if msg := nameProblem(c.name); msg != "" {
		errs = append(errs, c.errorf(layering.ErrInvalidName, "%s", msg))
	}
	for _, e := range c.errs {
		errs = append(errs, &ClusterError{Cluster: c.name, File: c.file, Line: c.line, Err: e})
	}
	url, err := c.artifactURL(f.artifact)
	if err != nil {
		errs = append(errs, err)
	}
	if f.stack == nil {
		return nil, joinErrs(append(errs, errdefs.Kind(layering.ErrInvalidOption, "fleet %q: no stack", f.name)))
	}
	b, err := f.stack()
	if err != nil {
		return nil, joinErrs(append(errs, fmt.Errorf("fleet %q: %w", f.name, err)))
	}
	if url != "" {
		b.SetArtifact(url)
	}
	if c.outputs != "" {
		out := c.outputs
		if c.file != "" && !filepath.IsAbs(out) {
			out = filepath.Join(filepath.Dir(c.file), filepath.FromSlash(out))
		}
		if abs, err := filepath.Abs(out); err == nil {
			out = abs
		}
		if !b.SetOutputs(out) {
			errs = append(errs, c.errorf(layering.ErrInvalidOption, "outputs %s: the stack needs exactly one vars entry, it has %d", c.outputs, len(b.VarsEntries())))
		}
	}
	for _, name := range c.disable {
		if !b.RemoveLayer(name) {
			errs = append(errs, c.errorf(layering.ErrUnknownDependency, "disable: the stack has no layer %q", name))
		}
	}
	for _, o := range c.overrides {
		var opts []layering.StepOption
		for _, opt := range o.opts {
			if opt == nil {
				errs = append(errs, c.errorf(layering.ErrInvalidOption, "layers.%s: nil StepOption", o.layer))
				continue
			}
			opts = append(opts, opt)
		}
		if !b.EditLayer(o.layer, opts...) {
			errs = append(errs, c.errorf(layering.ErrUnknownDependency, "layers: the stack has no layer %q", o.layer))
		}
	}
	for _, x := range c.extra {
		line := x.line
		if line == 0 {
			line = c.line
		}
		b.Layer(x.name, append([]layering.StepOption{layering.DeclaredAt(c.file, line)}, x.opts...)...)
	}
	if len(c.substitute) > 0 {
		for _, name := range b.LayerNames() {
			b.EditLayer(name, layering.SubstituteDefaults(c.substitute))
		}
	}
	if len(errs) > 0 {
		return nil, joinErrs(errs)
	}
	return b, nil
}

// StackDir is the directory of the cluster's stack file (the root its
// layer paths are relative to) and RenderedPath where the stack renders
// its Kustomizations in an artifact, relative to that directory.
func (f *Fleet) StackDir(cluster string) (dir, renderedPath string, err error) {
	b, err := f.Stack(cluster)
	if err != nil {
		return "", "", err
	}
	if b.Dir() == "" {
		return "", "", errdefs.Kind(layering.ErrInvalidOption, "fleet %q: cluster %q: the stack has no directory (it was not read from a file)", f.name, cluster)
	}
	return b.Dir(), b.RenderedPath(), nil
}

// Inputs are the files the fleet reads that must never be pushed: the
// fleet file and every IaC outputs file of the stack and the clusters
// (they hold sensitive values). Paths are absolute.
func (f *Fleet) Inputs() ([]string, error) {
	var files []string
	add := func(p string) {
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(files, abs) {
			files = append(files, abs)
		}
	}
	if f.file != "" {
		add(f.file)
	}
	// The stack's own outputs files, the same for every cluster: the stack
	// is loaded once for them, not once per cluster.
	if f.stack != nil {
		if b0, err := f.stack(); err == nil {
			for _, v := range b0.VarsEntries() {
				if v.Outputs != "" && b0.Dir() != "" {
					add(filepath.Join(b0.Dir(), filepath.FromSlash(v.Outputs)))
				}
			}
		}
	}
	for _, name := range f.Clusters() {
		b, err := f.Resolve(name)
		if err != nil {
			return nil, err
		}
		for _, v := range b.VarsEntries() {
			if v.Outputs == "" {
				continue
			}
			p := v.Outputs
			if !filepath.IsAbs(p) && b.Dir() != "" {
				p = filepath.Join(b.Dir(), filepath.FromSlash(p))
			}
			add(p)
		}
	}
	return files, nil
}

// nameProblem says what is wrong with a fleet or cluster name, or "", as
// package layering says it of a layer's.
func nameProblem(name string) string {
	if len(validation.IsDNS1123Label(name)) == 0 {
		return ""
	}
	return "name must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (a DNS-1123 label of at most 63 characters)"
}

// joinErrs joins errs one per line.
func joinErrs(errs []error) error { return errors.Join(errs...) }
