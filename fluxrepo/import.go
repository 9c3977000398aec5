package fluxrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/stackpath"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Imported is a repository's platform as a stack file.
type Imported struct {
	// Stack is the stack file (fluxpack.dev/v1alpha1 Stack); its layers'
	// paths are relative to the repository's root, where it belongs, or to
	// the folder of WithStackFile's file.
	Stack []byte
	// Differences are what the stack does not say as the repository does,
	// one line each naming the Kustomization and where it is declared: none
	// is dropped silently.
	Differences []string
}

// Import reads the tree of entry (Read) and writes its Kustomizations as a
// stack file: one layer per Kustomization but the root one (which flux
// bootstrap applies), every field as the Kustomization has it, the
// repository's own source as the stack's, and Flux's defaults left to
// Flux (FluxDefaults). It then renders the stack and compares each
// rendered Kustomization's spec with the original, field for field;
// whatever differs is listed in Differences, as is what the stack model
// cannot hold (a dependency outside the stack). spec.suspend is kept, and
// so is its gate: a Kustomization that a suspended one applies (directly
// or through others) is created only once that one is resumed, so its
// layer depends on the suspended one, which kustomize-controller holds
// until that is resumed and Ready; Import refuses a suspended
// Kustomization whose gate it cannot say so (one that waits for what it
// applies, or that is not a layer of the stack), naming it. A
// Kustomization with wait: true loses its spec.healthChecks, which Flux
// ignores there (a Difference says so); one without spec.path gets "./",
// the source's root, which is how Flux reads it. A
// tenant's Kustomization (in another namespace than flux-system, with its
// service account and sources there) is not made a layer, which would move
// it to flux-system: the layer that applies it keeps applying it as it is
// (a Difference says so); if the root applies it, Import refuses, naming it.
func Import(ctx context.Context, entry string, opts ...Option) (*Imported, error) {
	repo, err := Read(ctx, entry, opts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	return importPlan(repo)
}

func importPlan(repo *Repository) (*Imported, error) {
	p := repo.Plan
	root := p.Layers[0]
	out := &Imported{}
	differ := func(l layering.Layer, format string, args ...any) {
		out.Differences = append(out.Differences, fmt.Sprintf("%s:%d: %s: %s", l.File, l.Line, kustomizationRef(l.Kustomization), fmt.Sprintf(format, args...)))
	}
	differ(root, "not imported: it applies the entry point (%s), as flux bootstrap does; the stack's render is what it would apply", repo.Entry)
	var others []string
	for _, o := range repo.Inputs[0].Objects {
		if _, isKs := asKustomization(o); isKs || o.Kind == "GitRepository" && o.Name == DefaultSource().Name {
			continue
		}
		others = append(others, fmt.Sprintf("%s (%s:%d)", o, o.File, o.Line))
	}
	if len(others) > 0 {
		differ(root, "it also applies objects that are not Kustomizations, which the stack does not carry: keep them beside the rendered stack: %s", strings.Join(others, ", "))
	}
	// A tenant's Kustomization (another namespace, its own service account
	// and sources there) cannot be a layer: a stack puts every layer in one
	// namespace, where its serviceAccountName and sourceRef would name other
	// objects. When a layer applies it, that layer keeps applying it as it
	// is; when the root does, import refuses.
	layerRef := map[string]string{}
	for _, l := range p.Layers {
		layerRef[l.Name] = kustomizationRef(l.Kustomization)
	}
	tenant := map[string]bool{}
	var refused []error
	for _, l := range p.Layers[1:] {
		k := l.Kustomization
		if namespaceOr(k.Namespace, DefaultNamespace) == DefaultNamespace {
			continue
		}
		tenant[l.Name] = true
		what := tenantFields(k)
		if l.Parent == root.Name {
			refused = append(refused, fmt.Errorf("%s:%d: %s: %s: a stack puts every layer in %s, and the root applies it, so no layer of the stack would; move it into a folder that a Kustomization in %s applies",
				l.File, l.Line, kustomizationRef(k), what, DefaultNamespace, DefaultNamespace))
			continue
		}
		differ(l, "not imported as a layer: it is a tenant's (%s), which a stack, all in %s, cannot say; %s, a layer of the stack, applies it as it is", what, DefaultNamespace, layerRef[l.Parent])
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("importing %s: %w", repo.Entry, errors.Join(refused...))
	}
	stackDir, err := repo.stackDir()
	if err != nil {
		return nil, err
	}
	if stackDir == "" {
		stackDir = "."
		out.Differences = append(out.Differences, fmt.Sprintf("the stack file is written outside the repository %s: its layers' paths are relative to the repository's root, so it renders from there, not from where it is written", repo.Root))
	}
	names := map[string]string{} // layer name → stack layer name
	for _, l := range p.Layers[1:] {
		if tenant[l.Name] {
			continue
		}
		if prev, dup := names[l.Name]; dup || slices.Contains(slices.Collect(maps.Values(names)), l.Kustomization.Name) {
			differ(l, "not imported: another Kustomization (%s) has its name in the stack's namespace", prev)
			continue
		}
		names[l.Name] = l.Kustomization.Name
	}
	gate, err := gates(repo, names)
	if err != nil {
		return nil, fmt.Errorf("importing %s: %w", repo.Entry, err)
	}
	source := kustomizev1.CrossNamespaceSourceReference{Kind: DefaultSource().Kind, Name: DefaultSource().Name}
	if s := root.Kustomization.Spec.SourceRef; s.Kind != "" {
		source = s
	}
	builder := layering.New(stackName(p.Name), layering.FromSource(source), layering.FluxDefaults(), layering.External(p.External...))
	imported := 0
	for _, l := range p.Layers[1:] {
		name, ok := names[l.Name]
		if !ok {
			continue
		}
		k := l.Kustomization
		g, gated := gate[l.Name]
		switch {
		case gated:
			through := ""
			if l.Parent != g.parent {
				through = " (through Kustomization " + l.Parent + ")"
			}
			differ(l, "it is created only once Kustomization %s, which applies it%s and is suspended (spec.suspend: true), is resumed; the stack applies every layer from its root and makes it depend on %s instead, so kustomize-controller holds it until %s is resumed and Ready (it does not reconcile a suspended Kustomization, so on a fresh cluster that one is never Ready)", g.parent, through, g.layer, g.layer)
		case l.Parent != root.Name:
			differ(l, "it is applied by Kustomization %s; the stack applies every layer from its root, so it is applied sooner", l.Parent)
		}
		if k.Spec.Wait && len(k.Spec.HealthChecks) > 0 {
			differ(l, "spec.healthChecks not imported: with wait: true, Flux ignores them and health-checks every object the Kustomization applies; the layer keeps wait: true, which does the same")
		}
		spec := gatedSpec(normalize(k), g)
		depLayers := l.DependsOn // the layers of spec.DependsOn, in order
		if len(spec.DependsOn) > len(depLayers) {
			depLayers = append(slices.Clip(depLayers), g.parent)
		}
		var deps []kustomizev1.DependencyReference
		for i, d := range spec.DependsOn {
			dn, ok := names[depLayers[i]]
			if !ok {
				differ(l, "dependsOn %s is not a layer of the stack: left out", depLayers[i])
				continue
			}
			d.Name, d.Namespace = dn, ""
			deps = append(deps, d)
		}
		spec.DependsOn = deps
		if spec.SourceRef == source {
			spec.SourceRef = kustomizev1.CrossNamespaceSourceReference{}
			spec.Path = stackpath.FromDir(stackDir, spec.Path)
		}
		builder.Layer(name, layering.FromKustomization(spec))
		imported++
	}
	if imported == 0 {
		what := "no Kustomization"
		if len(others) > 0 {
			what = "no Kustomization, only " + strings.Join(others, ", ")
		}
		return nil, fmt.Errorf("importing %s: its tree applies %s: a stack is made of Kustomizations, so there is nothing to import", repo.Entry, what)
	}
	data, err := stackfile.Marshal(builder)
	if err != nil {
		return nil, fmt.Errorf("writing the stack of %s: %w", repo.Entry, err)
	}
	out.Stack = data

	// The round trip: render the stack and compare with the originals.
	b, err := stackfile.Parse("stack.yaml", data)
	if err != nil {
		return nil, fmt.Errorf("reading back the stack of %s: %w", repo.Entry, err)
	}
	plan, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("building the stack of %s: %w", repo.Entry, err)
	}
	rendered := map[string]*kustomizev1.Kustomization{}
	for _, l := range plan.Layers {
		rendered[l.Name] = l.Kustomization
	}
	for _, l := range p.Layers[1:] {
		name, ok := names[l.Name]
		if !ok {
			continue
		}
		orig, back := gatedSpec(normalize(l.Kustomization), gate[l.Name]), normalize(rendered[name])
		if stackDir != "." && back.SourceRef == source {
			orig.Path, back.Path = path.Clean(orig.Path), path.Join(stackDir, back.Path)
		}
		for _, f := range specDiff(orig, back) {
			differ(l, "spec.%s renders differently", f)
		}
	}
	return out, nil
}

// gateOf is the suspended Kustomization that holds a layer back: the
// nearest of its parents with spec.suspend, by its name in the repository
// (parent) and in the stack (layer).
type gateOf struct{ parent, layer string }

// gates finds, for each layer the stack imports (names), the suspended
// Kustomization above it, if any: in the repository it creates nothing
// below it until it is resumed, and a stack, which applies every layer
// from its root, keeps that gate only by making the layer depend on it
// (kustomize-controller reconciles no Kustomization whose dependency has
// never been Ready, and a suspended one never reconciles). The nearest
// suspended parent is enough: it depends on the next one up. Import
// refuses a gate it cannot say that way: one that is not a layer of the
// stack, or one that waits for what it applies (wait: true, or health
// checks on what it does not apply itself), whose dependents would wait
// for it while it waits for them.
func gates(repo *Repository, names map[string]string) (map[string]gateOf, error) {
	p := repo.Plan
	index := map[string]int{}
	for i, l := range p.Layers {
		index[l.Name] = i
	}
	out := map[string]gateOf{}
	held := map[string][]string{} // gate → the layers it holds back
	var refused []error
	for _, l := range p.Layers[1:] {
		if _, ok := names[l.Name]; !ok {
			continue
		}
		seen := map[string]bool{l.Name: true}
		for parent := l.Parent; parent != "" && parent != p.Layers[0].Name && !seen[parent]; {
			seen[parent] = true
			i, ok := index[parent]
			if !ok {
				break
			}
			pl := p.Layers[i]
			if pl.Kustomization.Spec.Suspend {
				layer, ok := names[pl.Name]
				if !ok {
					refused = append(refused, fmt.Errorf("%s:%d: %s: suspended (spec.suspend: true), it holds back %s, which the stack would apply from its root; it is not a layer of the stack (see the differences), so nothing would hold it back: make %s a Kustomization in %s that the root applies",
						pl.File, pl.Line, kustomizationRef(pl.Kustomization), kustomizationRef(l.Kustomization), kustomizationRef(pl.Kustomization), DefaultNamespace))
					break
				}
				out[l.Name] = gateOf{parent: pl.Name, layer: layer}
				held[pl.Name] = append(held[pl.Name], l.Name)
				break
			}
			parent = pl.Parent
		}
	}
	for _, name := range slices.Sorted(maps.Keys(held)) {
		i := index[name]
		pl := p.Layers[i]
		if why := waitsOnWhatItHolds(pl.Kustomization, repo.Inputs[i].Objects); why != "" {
			refused = append(refused, fmt.Errorf("%s:%d: %s: suspended (spec.suspend: true), it holds back %s, which the stack applies from its root and can hold back only by making them depend on it; but it %s, so they would wait for it while it waits for them, and none would ever be applied: drop that from it, or check them from their own Kustomizations",
				pl.File, pl.Line, kustomizationRef(pl.Kustomization), strings.Join(held[name], ", "), why))
		}
	}
	if len(refused) > 0 {
		return nil, errors.Join(refused...)
	}
	return out, nil
}

// waitsOnWhatItHolds says why k, Ready only once its health checks pass,
// would wait for what it applies or what that applies: wait: true, or a
// health check on a Kustomization, or on an object k does not apply
// itself (objs); "" when it does not.
func waitsOnWhatItHolds(k *kustomizev1.Kustomization, objs []*fluxbuild.Object) string {
	if k.Spec.Wait {
		return "has wait: true (it is Ready only once what it applies is)"
	}
	for _, hc := range k.Spec.HealthChecks {
		own := hc.Kind != kustomizev1.KustomizationKind && slices.ContainsFunc(objs, func(o *fluxbuild.Object) bool {
			return o.Kind == hc.Kind && o.Name == hc.Name && (hc.Namespace == "" || o.Namespace == hc.Namespace)
		})
		if !own {
			return fmt.Sprintf("health-checks %s/%s/%s, which it does not apply itself", hc.Kind, hc.Namespace, hc.Name)
		}
	}
	return ""
}

// gatedSpec is spec with a dependency on the layer that gates it, when it
// has one (gates) and does not depend on it already.
func gatedSpec(spec kustomizev1.KustomizationSpec, g gateOf) kustomizev1.KustomizationSpec {
	if g.layer == "" || slices.ContainsFunc(spec.DependsOn, func(d kustomizev1.DependencyReference) bool { return d.Name == g.parent && d.Namespace == "" }) {
		return spec
	}
	spec.DependsOn = append(slices.Clip(spec.DependsOn), kustomizev1.DependencyReference{Name: g.parent})
	return spec
}

// tenantFields names what makes k a tenant's: its namespace, service
// account and source.
func tenantFields(k *kustomizev1.Kustomization) string {
	out := []string{"namespace " + k.Namespace}
	if k.Spec.ServiceAccountName != "" {
		out = append(out, "serviceAccountName "+k.Spec.ServiceAccountName)
	}
	s := sourceOf(k)
	out = append(out, fmt.Sprintf("sourceRef %s/%s/%s", s.Kind, s.Namespace, s.Name))
	return strings.Join(out, ", ")
}

// stackDir is the folder of the stack file (WithStackFile), relative to
// the repository's root, slash-separated: "." without it, "" when it is
// outside the repository.
func (r *Repository) stackDir() (string, error) {
	if r.stackFile == "" {
		return ".", nil
	}
	dir, inside, err := stackpath.Dir(r.Root, r.stackFile)
	if err != nil || !inside {
		return "", err // outside the repository: said by a Difference
	}
	return dir, nil
}

// stackName makes a name a stack's metadata.name can be.
func stackName(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "platform"
	}
	return out
}

// normalize is the spec as Flux reads it: a reference's namespace that is
// the Kustomization's own says nothing, no path is the source's root
// ("./"), and with wait: true the health checks are those of every object
// applied, not spec.healthChecks, which kustomize-controller ignores.
func normalize(k *kustomizev1.Kustomization) kustomizev1.KustomizationSpec {
	s := *k.Spec.DeepCopy()
	if s.Path == "" {
		s.Path = "./"
	}
	if s.Wait {
		s.HealthChecks = nil
	}
	if s.SourceRef.Namespace == k.Namespace {
		s.SourceRef.Namespace = ""
	}
	for i := range s.DependsOn {
		if s.DependsOn[i].Namespace == k.Namespace {
			s.DependsOn[i].Namespace = ""
		}
	}
	return s
}

// specDiff names the top-level fields of two specs that differ.
func specDiff(a, b kustomizev1.KustomizationSpec) []string {
	am, bm := toMap(a), toMap(b)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(am, bm))) {
		ja, _ := json.Marshal(am[k])
		jb, _ := json.Marshal(bm[k])
		if string(ja) != string(jb) {
			out = append(out, k)
		}
	}
	return out
}

func toMap(s kustomizev1.KustomizationSpec) map[string]any {
	j, _ := json.Marshal(s)
	m := map[string]any{}
	_ = json.Unmarshal(j, &m)
	return m
}

func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
