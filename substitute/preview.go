package substitute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/yamlcheck"
)

// The labels kustomize-controller puts on every object it applies.
const (
	NameLabel      = "kustomize.toolkit.fluxcd.io/name"
	NamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// Redacted replaces, with WithRedactedSecrets, every value a variable takes
// from a substituteFrom Secret.
const Redacted = "REDACTED"

// PreviewOption configures Preview. Invalid options make Preview fail.
type PreviewOption func(*previewOptions) error

type previewOptions struct {
	sources  *Sources
	varsFrom []string
	strict   bool
	redact   bool
}

// WithSources satisfies spec.postBuild.substituteFrom from src (see
// ReadSources). Without it every substituteFrom reference is missing.
func WithSources(src *Sources) PreviewOption {
	return func(o *previewOptions) error {
		if src == nil {
			return fmt.Errorf("%w: WithSources: nil sources", ErrInvalidOption)
		}
		o.sources = src
		return nil
	}
}

// WithVarsFrom satisfies spec.postBuild.substituteFrom from the ConfigMaps
// and Secrets of YAML files (see ReadSources), read when Preview runs.
func WithVarsFrom(paths ...string) PreviewOption {
	return func(o *previewOptions) error {
		for _, p := range paths {
			if p == "" {
				return fmt.Errorf("%w: WithVarsFrom: empty path", ErrInvalidOption)
			}
		}
		o.varsFrom = append(o.varsFrom, paths...)
		return nil
	}
}

// WithStrictSubstitute turns strict substitution on (the default, as in
// kustomize-controller ≥ v1.9) or off (`flux build` without
// --strict-substitute).
func WithStrictSubstitute(strict bool) PreviewOption {
	return func(o *previewOptions) error { o.strict = strict; return nil }
}

// WithRedactedSecrets prints Redacted wherever a variable loaded from a
// substituteFrom Secret lands. Errors are still those of the real values.
func WithRedactedSecrets() PreviewOption {
	return func(o *previewOptions) error { o.redact = true; return nil }
}

// ReadKustomization reads the Flux Kustomization named name from a YAML file
// of one or more documents, as `flux build kustomization --kustomization-file`
// does (other documents are skipped). With name "" the file must hold
// exactly one Kustomization.
func ReadKustomization(path, name string) (*kustomizev1.Kustomization, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading Kustomization: %w", err)
	}
	var found []*kustomizev1.Kustomization
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for n := 1; ; n++ {
		ks := &kustomizev1.Kustomization{}
		err := dec.Decode(ks)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fileErr(path, 0, fmt.Errorf("%w: document %d: %w", ErrMalformed, n, err))
		}
		if strings.HasPrefix(ks.APIVersion, kustomizev1.GroupVersion.Group+"/") && ks.Kind == kustomizev1.KustomizationKind &&
			(name == "" || ks.Name == name) {
			found = append(found, ks)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && name != "":
		return nil, fileErr(path, 0, fmt.Errorf("%w: no Kustomization %q (%s)", ErrWrongShape, name, kustomizev1.GroupVersion.Group))
	case len(found) == 0:
		return nil, fileErr(path, 0, fmt.Errorf("%w: no Kustomization (%s)", ErrWrongShape, kustomizev1.GroupVersion.Group))
	default:
		return nil, fileErr(path, 0, fmt.Errorf("%w: %d Kustomizations named %q; choose one by name", ErrWrongShape, len(found), name))
	}
}

// Preview returns, as a YAML stream, the objects kustomize-controller would
// apply for ks with dir as its spec.path, what `flux build kustomization
// --dry-run` prints for the same inputs:
//
//  1. a kustomization.yaml is generated as Flux does when dir has none
//     (every .yaml/.yml file that kustomize can read and every
//     sub-directory holding a kustomization file, minus .sourceignore
//     matches), and spec.targetNamespace, namePrefix, nameSuffix, patches,
//     images, components and buildMetadata are written into it;
//  2. kustomize builds it (plugins off, no load restrictions);
//  3. spec.postBuild substitutes every object (see Substituter), with
//     substituteFrom satisfied from WithSources;
//  4. the kustomize.toolkit.fluxcd.io/name and /namespace labels and
//     spec.commonMetadata are set;
//  5. each object is printed with sorted keys, followed by "---".
//
// A generated kustomization of plain files with nothing to transform is
// built without kustomize's quadratic resource map, so the time stays
// linear in the number of objects; its output is the same.
//
// Preview reads dir and never writes to it.
func Preview(dir string, ks *kustomizev1.Kustomization, opts ...PreviewOption) ([]byte, error) {
	o := previewOptions{strict: true}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if len(o.varsFrom) > 0 {
		read, err := ReadSources(o.varsFrom...)
		if err != nil {
			return nil, err
		}
		if o.sources != nil {
			read = o.sources.merge(read)
		}
		o.sources = read
	}
	name := "Kustomization/" + ks.Namespace + "/" + ks.Name
	if ks.Namespace == "" {
		name = "Kustomization/" + ks.Name
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	ress, err := build(dir, ks)
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: %w", dir, name, err)
	}
	out, err := render(ress, ks, o)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", name, err)
	}
	return out, nil
}

// merge returns the sources of s and t; t's win on a clash.
func (s *Sources) merge(t *Sources) *Sources {
	m := &Sources{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, src := range []*Sources{s, t} {
		for k, v := range src.configMaps {
			m.configMaps[k] = v
		}
		for k, v := range src.secrets {
			m.secrets[k] = v
		}
	}
	return m
}

// PreviewFile previews the Kustomization named name (or the only one, with
// name "") of the YAML file ksFile, with dir as its path: ReadKustomization,
// then Preview.
func PreviewFile(dir, ksFile, name string, opts ...PreviewOption) ([]byte, error) {
	ks, err := ReadKustomization(ksFile, name)
	if err != nil {
		return nil, err
	}
	return Preview(dir, ks, opts...)
}

// render runs the postBuild substitution over ress, sets Flux's labels and
// commonMetadata and encodes each object, on every CPU. The outcome is that
// of Flux's sequential loop: the first object in order that fails
// substitution, or whose new ID another object holds at that point (Flux's
// resource map refuses it), is the error.
func render(ress []*resource.Resource, ks *kustomizev1.Kustomization, o previewOptions) ([]byte, error) {
	var real, masked *Substituter
	if ks.Spec.PostBuild != nil {
		real = NewSubstituter(ks, o.sources, WithStrict(o.strict))
		real.load()
		if o.redact && o.sources != nil {
			if m := o.sources.redacted(); m != nil {
				masked = NewSubstituter(ks, m, WithStrict(o.strict))
				masked.load()
			}
		}
	}
	before := make([]idKey, len(ress))
	ids := make(map[idKey]int, len(ress))
	for i, r := range ress {
		before[i] = keyOf(r.CurId())
		ids[before[i]]++
	}
	afters := make([]idKey, len(ress))
	subErrs := make([]error, len(ress))
	chunks := make([][]byte, len(ress))
	encErrs := make([]error, len(ress))
	parallel(len(ress), func(i int) {
		r := ress[i]
		if out, after, ok := fastObject(r, real, masked, ks); ok {
			chunks[i], afters[i] = out, after
			return
		}
		shown := r // what is printed: masked when redacting
		if real != nil {
			if masked != nil {
				shown = r.DeepCopy()
			}
			if _, err := real.Resource(r); err != nil {
				subErrs[i] = err
				return
			}
			afters[i] = keyOf(r.CurId())
			if masked != nil {
				if _, err := masked.Resource(shown); err != nil {
					subErrs[i] = err
					return
				}
			}
		}
		chunks[i], encErrs[i] = encodeObject(shown, ks)
	})
	for i := range ress {
		if subErrs[i] != nil {
			return nil, subErrs[i]
		}
		if real == nil {
			continue
		}
		after := afters[i]
		ids[before[i]]--
		ids[after]++
		if ids[after] > 1 {
			return nil, &ObjectError{Object: resName(ress[i]), Err: fmt.Errorf("%w: after substitution object %d has the ID of another object", ErrDuplicateID, i+1)}
		}
	}
	var buf bytes.Buffer
	for i := range ress {
		if encErrs[i] != nil {
			return nil, encErrs[i]
		}
		buf.Write(chunks[i])
	}
	return buf.Bytes(), nil
}

// parallel calls fn(0) … fn(n-1) on GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// redacted returns a copy of s whose Secrets hold Redacted in every key, or
// nil when s has no Secret.
func (s *Sources) redacted() *Sources {
	if len(s.secrets) == 0 {
		return nil
	}
	c := &Sources{configMaps: s.configMaps, secrets: make(map[string]*corev1.Secret, len(s.secrets))}
	for k, sec := range s.secrets {
		m := sec.DeepCopy()
		for d := range m.Data {
			m.Data[d] = []byte(Redacted)
		}
		c.secrets[k] = m
	}
	return c
}

// idKey is what kustomize's ResId.Equals compares.
type idKey struct {
	group, version, kind, namespace, name string
}

func keyOf(id resid.ResId) idKey {
	return idKey{id.Group, id.Version, id.Kind, id.EffectiveNamespace(), id.Name}
}

// encodeObject sets Flux's labels and commonMetadata on r and prints it as
// flux build does (YAML to unstructured, then sigs.k8s.io/yaml, "---" after
// each object).
func encodeObject(r *resource.Resource, ks *kustomizev1.Kustomization) ([]byte, error) {
	if err := r.PipeE(kyaml.SetLabel(NameLabel, ks.Name)); err != nil {
		return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("setting labels: %w", err)}
	}
	if err := r.PipeE(kyaml.SetLabel(NamespaceLabel, ks.Namespace)); err != nil {
		return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("setting labels: %w", err)}
	}
	y, err := r.AsYAML()
	if err != nil {
		return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("serialising: %w", err)}
	}
	objs, err := readObjects(y)
	if err != nil {
		return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("reading back: %w", err)}
	}
	var buf bytes.Buffer
	for _, obj := range objs {
		if m := ks.Spec.CommonMetadata; m != nil {
			setCommonMetadata(obj, m.Labels, m.Annotations)
		}
		data, err := yamlMarshal(obj)
		if err != nil {
			return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("encoding: %w", err)}
		}
		buf.Write(data)
		buf.WriteString("---\n")
	}
	return buf.Bytes(), nil
}

// fastObject is what substituting r and encodeObject yield, worked out from
// r's JSON: kustomize-controller turns the object into JSON and YAML and
// back up to four times (substitution reads the YAML back into the node,
// labelling and encoding turn it into YAML again, reading the build turns
// that into JSON again), and each round trip after the first gives the same
// JSON. It also returns the object's ID after substitution. ok is false,
// and the caller takes Flux's own steps, for anything out of the ordinary:
// an error, a List, a dropped document, labels or metadata of an odd shape,
// or a name, namespace, kind or apiVersion that is not a string.
func fastObject(r *resource.Resource, real, masked *Substituter, ks *kustomizev1.Kustomization) (out []byte, after idKey, ok bool) {
	m, j0, err := objectJSON(r)
	if err != nil {
		return nil, idKey{}, false
	}
	var y0 []byte // the YAML substitution reads, straight from the map when it can be
	if real != nil && m != nil {
		y0, _ = objectYAML(m)
	}
	// j is what Flux applies, shown what Preview prints (masked); a
	// substituted object's numbers pass through float64 (readBack).
	j, shown := j0, j0
	jBack, shownBack := false, false
	if real != nil {
		j1, done, err := real.substituteJSON(r, j0, y0)
		if err != nil {
			return nil, idKey{}, false
		}
		if done {
			j, shown, jBack, shownBack = j1, j1, true, true
		}
		if masked != nil {
			jm, done, err := masked.substituteJSON(r, j0, y0)
			if err != nil {
				return nil, idKey{}, false
			}
			shown, shownBack = j0, false
			if done {
				shown, shownBack = jm, true
			}
		}
	}
	obj, ok := plainObject(j, jBack)
	if !ok {
		return nil, idKey{}, false
	}
	g, v := resid.ParseGroupVersion(obj.GetAPIVersion())
	after = keyOf(resid.NewResIdWithNamespace(resid.NewGvk(g, v, obj.GetKind()), obj.GetName(), obj.GetNamespace()))
	if masked != nil {
		if obj, ok = plainObject(shown, shownBack); !ok {
			return nil, idKey{}, false
		}
	}
	labels, _, _ := unstructured.NestedStringMap(obj.Object, "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[NameLabel], labels[NamespaceLabel] = ks.Name, ks.Namespace
	obj.SetLabels(labels)
	if m := ks.Spec.CommonMetadata; m != nil {
		setCommonMetadata(obj, m.Labels, m.Annotations)
	}
	data, ok := objectYAML(obj.Object)
	if !ok {
		if data, err = yamlMarshal(obj); err != nil {
			return nil, idKey{}, false
		}
	}
	return append(data, "---\n"...), after, true
}

// objectJSON is r.MarshalJSON without its YAML round trip: kyaml encodes
// the node as YAML text and decodes that into a map; this decodes the node
// into the map directly, for a mapping (anything else goes to
// MarshalJSON), and returns the map too (nil when it went to
// MarshalJSON). FuzzPreviewVsFlux and the preview fixtures hold it to
// Flux.
func objectJSON(r *resource.Resource) (map[string]any, []byte, error) {
	n := r.RNode.YNode()
	if n == nil || n.Kind != kyaml.MappingNode {
		j, err := r.MarshalJSON()
		return nil, j, err
	}
	m := map[string]any{}
	if err := n.Decode(&m); err != nil {
		j, err := r.MarshalJSON()
		return nil, j, err
	}
	j, err := json.Marshal(m)
	return m, j, err
}

// plainObject decodes j as readObjects does (with readBack, after Flux's
// reading back of a substituted object), when j is one object (not a List)
// that readObjects keeps, with string apiVersion, kind, name and namespace
// (if any), and labels and annotations (if any) maps of strings.
func plainObject(j []byte, readBack bool) (*unstructured.Unstructured, bool) {
	m, ok := decodeObject(j, readBack)
	if !ok {
		return nil, false
	}
	obj := &unstructured.Unstructured{Object: m}
	if obj.IsList() {
		return nil, false
	}
	meta, isMap := obj.Object["metadata"].(map[string]any)
	if !isMap || !nonEmptyString(obj.Object["apiVersion"]) || !nonEmptyString(obj.Object["kind"]) || !nonEmptyString(meta["name"]) {
		return nil, false
	}
	if ns, found := meta["namespace"]; found {
		if _, isStr := ns.(string); !isStr {
			return nil, false
		}
	}
	for _, key := range []string{"labels", "annotations"} {
		v, found := meta[key]
		if !found {
			continue
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		for _, e := range m {
			if _, isStr := e.(string); !isStr {
				return nil, false
			}
		}
	}
	if strings.ToLower(obj.GetKind()) == "kustomization" && strings.HasPrefix(obj.GetAPIVersion(), "kustomize.config.k8s.io/") {
		return nil, false
	}
	return obj, true
}

func nonEmptyString(v any) bool {
	s, ok := v.(string)
	return ok && s != ""
}

// readObjects decodes a YAML stream into objects the way Flux reads a build
// (lists unrolled; documents without apiVersion, kind or name, and
// kustomize's own Kustomization, dropped).
func readObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 2048)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(obj); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if obj.IsList() {
			if err := obj.EachListItem(func(item k8sruntime.Object) error {
				objs = append(objs, item.(*unstructured.Unstructured))
				return nil
			}); err != nil {
				return nil, err
			}
			continue
		}
		if obj.GetName() != "" && obj.GetKind() != "" && obj.GetAPIVersion() != "" &&
			(strings.ToLower(obj.GetKind()) != "kustomization" || !strings.HasPrefix(obj.GetAPIVersion(), "kustomize.config.k8s.io/")) {
			objs = append(objs, obj)
		}
	}
}

func setCommonMetadata(obj *unstructured.Unstructured, labels, annotations map[string]string) {
	lbs := obj.GetLabels()
	if lbs == nil {
		lbs = map[string]string{}
	}
	for k, v := range labels {
		lbs[k] = v
	}
	if len(lbs) > 0 {
		obj.SetLabels(lbs)
	}
	ans := obj.GetAnnotations()
	if ans == nil {
		ans = map[string]string{}
	}
	for k, v := range annotations {
		ans[k] = v
	}
	if len(ans) > 0 {
		obj.SetAnnotations(ans)
	}
}

// generated is the kustomization Flux builds for a directory.
type generated struct {
	kus   kustypes.Kustomization
	kfile string // where it sits (or would sit) in the directory
	// plain: generated from files only, with nothing for kustomize to
	// transform; files holds each file's parsed resources.
	plain bool
	files map[string][]*resource.Resource
}

// generate does what fluxcd/pkg/kustomize's Generator.GenerateManifest does
// for flux build (ignore filters on, no extra ignore patterns).
func generate(dir string, ks *kustomizev1.Kustomization) (*generated, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	domain := strings.Split(abs, string(filepath.Separator))
	patterns, err := sourceignore.LoadIgnorePatterns(abs, domain)
	if err != nil {
		return nil, fmt.Errorf("loading ignore patterns: %w", err)
	}
	g := &generated{}
	var dirs bool
	if err := g.findOrScan(abs, patterns, domain, &dirs); err != nil {
		return nil, err
	}
	if err := filterIgnored(&g.kus, abs, sourceignore.NewDefaultMatcher(patterns, domain)); err != nil {
		return nil, err
	}
	s := ks.Spec
	if s.TargetNamespace != "" {
		g.kus.Namespace = s.TargetNamespace
	}
	if s.NamePrefix != "" {
		g.kus.NamePrefix = s.NamePrefix
	}
	if s.NameSuffix != "" {
		g.kus.NameSuffix = s.NameSuffix
	}
	for _, p := range s.Patches {
		kp := kustypes.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			kp.Target = &kustypes.Selector{
				ResId:              resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		g.kus.Patches = append(g.kus.Patches, kp)
	}
	for _, c := range s.Components {
		if !localRelative(c) {
			return nil, fmt.Errorf("component path '%s' must be local and relative", c)
		}
		if _, err := os.Stat(filepath.Join(abs, c)); err != nil && s.IgnoreMissingComponents {
			continue
		}
		g.kus.Components = append(g.kus.Components, c)
	}
	for _, im := range s.Images {
		i := imageIndex(g.kus.Images, im.Name)
		if i < 0 {
			g.kus.Images = append(g.kus.Images, kustypes.Image{Name: im.Name, NewName: im.NewName, NewTag: im.NewTag, Digest: im.Digest})
			continue
		}
		if im.NewName != "" {
			g.kus.Images[i].NewName = im.NewName
		}
		if im.NewTag != "" || im.Digest != "" {
			g.kus.Images[i].NewTag, g.kus.Images[i].Digest = im.NewTag, im.Digest
		}
	}
	if len(s.BuildMetadata) > 0 {
		g.kus.BuildMetadata = make([]string, len(s.BuildMetadata))
		for i, b := range s.BuildMetadata {
			g.kus.BuildMetadata[i] = string(b)
		}
	}
	k := g.kus
	g.plain = g.files != nil && !dirs && (k.Namespace == "" || len(k.Resources) == 0) && k.NamePrefix == "" && k.NameSuffix == "" &&
		len(k.Patches) == 0 && len(k.Components) == 0 && len(k.Images) == 0 && len(k.BuildMetadata) == 0 && len(k.Crds) == 0
	return g, nil
}

// findOrScan reads dir's kustomization file or, without one, lists what
// Flux's generator lists: every .yaml/.yml file kustomize can read and every
// sub-directory holding a kustomization file (not descended into).
func (g *generated) findOrScan(abs string, patterns []gitignore.Pattern, domain []string, dirs *bool) error {
	g.kus.TypeMeta = kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(abs, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			data, err := inputfile.ReadManifest(p)
			if err != nil {
				return err
			}
			if err := yaml.Unmarshal(data, &g.kus); err != nil {
				return fmt.Errorf("reading %s: %w", p, err)
			}
			g.kfile = p
			if len(g.kus.Resources) == 0 {
				g.kus.BuildMetadata = []string{kustypes.OriginAnnotations}
			}
			return nil
		}
	}
	g.kfile = filepath.Join(abs, konfig.DefaultKustomizationFileName())
	g.files = map[string][]*resource.Resource{}
	matcher := sourceignore.NewDefaultMatcher(patterns, domain)
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	type file struct {
		path string
		data []byte
		ress []*resource.Resource
		err  error
	}
	var files []file
	err := filepath.Walk(abs, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == abs {
			return err
		}
		if info.IsDir() {
			for _, name := range konfig.RecognizedKustomizationFileNames() {
				if fi, err := os.Stat(filepath.Join(path, name)); err == nil && !fi.IsDir() {
					g.kus.Resources = append(g.kus.Resources, strings.Replace(path, abs, ".", 1))
					*dirs = true
					return filepath.SkipDir
				}
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		if len(patterns) > 0 {
			if fi, err := os.Lstat(path); err == nil && matcher.Match(strings.Split(path, string(filepath.Separator)), fi.IsDir()) {
				return nil
			}
		}
		data, err := inputfile.ReadManifest(path)
		if err != nil {
			files = append(files, file{path: path, err: err})
			return filepath.SkipAll // the error, after any in the files before
		}
		files = append(files, file{path: path, data: data})
		g.kus.Resources = append(g.kus.Resources, strings.Replace(path, abs, ".", 1))
		return nil
	})
	if err != nil {
		return err
	}
	// Parse on every core; the first bad file in walk order is the error,
	// as it is for Flux's generator, which stops there.
	parallel(len(files), func(i int) {
		if files[i].err == nil {
			files[i].ress, files[i].err = parseFile(rf, files[i].path, files[i].data)
		}
	})
	for _, f := range files {
		if f.err != nil {
			return f.err
		}
		g.files[strings.Replace(f.path, abs, ".", 1)] = f.ress
	}
	if len(g.kus.Resources) == 0 {
		g.kus.Namespace = "_placeholder"
	}
	return nil
}

func parseFile(rf *resource.Factory, path string, data []byte) (ress []*resource.Resource, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: kustomize panicked parsing YAML: %v", ErrMalformed, r)
		}
	}()
	ress, err = sliceFromBytes(rf, data)
	if err != nil {
		return nil, fileErr(path, 0, fmt.Errorf("%w: decoding Kubernetes YAML: %w", ErrMalformed, err))
	}
	return ress, nil
}

// sliceFromBytes is rf.SliceFromBytes, without its most expensive step
// where that step changes nothing. kio.FromBytes inflates anchors, aliases
// and merge keys (RNode.DeAnchor), copying every mapping of every object
// to do so; a file without & (no anchor, so an alias cannot resolve and
// the parse fails anyway), << or merge (no merge key) has nothing to
// inflate. Only a mapping with a repeated key would come out different,
// and such an object fails later either way, as Flux's AsYaml does. The
// remaining steps are the factory's own: its checks of every object
// (ResourcesFromRNodes with local configuration kept, as SliceFromBytes
// keeps it), and for a FooList, which would be inlined, SliceFromBytes
// itself. FuzzPreviewVsFlux holds this to Flux's output.
func sliceFromBytes(rf *resource.Factory, data []byte) ([]*resource.Resource, error) {
	if bytes.IndexByte(data, '&') >= 0 || bytes.Contains(data, []byte("<<")) || bytes.Contains(data, []byte("merge")) {
		// DeAnchor crashes on an alias inside its own anchor.
		if err := yamlcheck.Check(data); err != nil {
			return nil, err
		}
		return rf.SliceFromBytes(data)
	}
	nodes, err := (&kio.ByteReader{OmitReaderAnnotations: true, Reader: bytes.NewReader(data)}).Read()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if strings.HasSuffix(n.GetKind(), "List") {
			return rf.SliceFromBytes(data)
		}
	}
	keep := *rf
	keep.IncludeLocalConfigs = true
	return keep.ResourcesFromRNodes(nodes)
}

// filterIgnored drops the resources, components and crds that the source
// ignore rules match, as Flux does; a missing local entry is an error.
func filterIgnored(k *kustypes.Kustomization, abs string, m gitignore.Matcher) error {
	for _, s := range []struct {
		list *[]string
		urls bool
	}{{&k.Resources, true}, {&k.Components, true}, {&k.Crds, false}} {
		kept := (*s.list)[:0]
		for _, e := range *s.list {
			if !s.urls || !isURL(e) {
				p := filepath.Join(abs, e)
				fi, err := os.Lstat(p)
				if err != nil {
					return err
				}
				if m.Match(strings.Split(p, string(filepath.Separator)), fi.IsDir()) {
					continue
				}
			}
			kept = append(kept, e)
		}
		*s.list = kept
	}
	return nil
}

func isURL(s string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && u.Scheme != ""
}

// localRelative is kustomize's test for a local, relative component path.
func localRelative(p string) bool {
	for _, prefix := range []string{"git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/"} {
		if len(prefix) < len(p) && strings.ToLower(p[:len(prefix)]) == prefix {
			return false
		}
	}
	return !filepath.IsAbs(p) && !filepath.IsAbs(strings.TrimPrefix(strings.ToLower(p), "file://"))
}

func imageIndex(images []kustypes.Image, name string) int {
	for i, im := range images {
		if im.Name == name {
			return i
		}
	}
	return -1
}

// build returns the objects kustomize builds for ks in dir, in kustomize's
// order.
func build(dir string, ks *kustomizev1.Kustomization) ([]*resource.Resource, error) {
	g, err := generate(dir, ks)
	if err != nil {
		return nil, fmt.Errorf("generating kustomization.yaml: %w", err)
	}
	if g.plain {
		return g.buildPlain()
	}
	manifest, err := yaml.Marshal(g.kus)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(g.kfile))
	if err != nil {
		return nil, err
	}
	fs := &overlayFS{FileSystem: filesys.MakeFsOnDisk(), path: filepath.Join(root, filepath.Base(g.kfile)), data: manifest}
	m, err := kustomizeBuild(fs, root)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	return m.Resources(), nil
}

// buildMu serialises previews: kustomize's builds share global state
// (kustomize#3659, the OpenAPI schema).
var buildMu sync.Mutex

func kustomizeBuild(fs filesys.FileSystem, dir string) (m resmap.ResMap, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	openapi.ResetOpenAPI()
	_ = openapi.Schema()
	defer openapi.ResetOpenAPI()
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: kustypes.LoadRestrictionsNone,
		PluginConfig:     kustypes.DisabledPluginConfig(),
	})
	return k.Run(fs, dir)
}

// buildPlain gives what kustomize builds from a generated kustomization of
// plain files (resources in file order, unsorted as Flux's krusty options
// leave them; duplicate IDs refused; objects annotated
// config.kubernetes.io/local-config dropped), in linear time: kustomize's
// resource map checks every new object against all the others.
func (g *generated) buildPlain() ([]*resource.Resource, error) {
	var ress []*resource.Resource
	seen := map[idKey]string{}
	for _, f := range g.kus.Resources {
		for _, r := range g.files[f] {
			k := keyOf(r.CurId())
			if prev, ok := seen[k]; ok {
				return nil, &ObjectError{Object: resName(r), Err: fmt.Errorf("%w: in %s and %s", ErrDuplicateID, prev, f)}
			}
			seen[k] = f
			if v, ok := r.GetAnnotations()[konfig.IgnoredByKustomizeAnnotation]; ok && v != "false" {
				continue
			}
			if err := cleanAnnotations(r); err != nil {
				return nil, &ObjectError{Object: resName(r), Err: err}
			}
			ress = append(ress, r)
		}
	}
	return ress, nil
}

// cleanAnnotations is what krusty does to every object at the end of a
// build: it drops kustomize's build, origin and transformer annotations by
// reading the annotations as strings and writing them back, so annotation
// values of another type come out as strings and empty annotations vanish.
// Annotations of a shape kustomize cannot write back make it panic, and
// Flux's build fail; so does this.
func cleanAnnotations(r *resource.Resource) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: kustomize panicked rewriting annotations: %v", ErrMalformed, p)
		}
	}()
	r.RemoveBuildAnnotations()
	if err := r.SetOrigin(nil); err != nil {
		return err
	}
	return r.ClearTransformations()
}

// overlayFS is the disk with one file replaced: the kustomization Flux
// generates, which it never writes into the source directory either.
type overlayFS struct {
	filesys.FileSystem
	path string
	data []byte
}

func (o *overlayFS) is(p string) bool { return filepath.Clean(p) == o.path }

func (o *overlayFS) Exists(p string) bool { return o.is(p) || o.FileSystem.Exists(p) }

func (o *overlayFS) IsDir(p string) bool { return !o.is(p) && o.FileSystem.IsDir(p) }

func (o *overlayFS) ReadFile(p string) ([]byte, error) {
	if o.is(p) {
		return bytes.Clone(o.data), nil
	}
	return o.FileSystem.ReadFile(p)
}

func (o *overlayFS) ReadDir(p string) ([]string, error) {
	names, err := o.FileSystem.ReadDir(p)
	if err != nil || filepath.Clean(p) != filepath.Dir(o.path) {
		return names, err
	}
	base := filepath.Base(o.path)
	for _, n := range names {
		if n == base {
			return names, nil
		}
	}
	return append(names, base), nil
}
