package substitute

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fluxpack/fluxpack/internal/memo"
	"github.com/fluxpack/fluxpack/internal/parallel"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// The labels kustomize-controller puts on every object it applies.
const (
	NameLabel      = "kustomize.toolkit.fluxcd.io/name"
	NamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// Redacted replaces, with WithRedactedSecrets, every value a variable takes
// from a substituteFrom Secret.
const Redacted = "REDACTED"

// RenderOption configures Render. Only this package implements it; an
// option given a value it cannot use makes Render fail.
type RenderOption interface{ applyToRender(*renderOptions) error }

type renderOptions struct {
	sources *Sources
	strict  bool
	redact  bool
	memo    *RenderMemo
}

// WithRedactedSecrets makes Render print Redacted wherever a variable
// loaded from a substituteFrom Secret lands. Errors are still those of the
// real values.
func WithRedactedSecrets() RenderOption { return redactOption{} }

type redactOption struct{}

func (redactOption) applyToRender(o *renderOptions) error { o.redact = true; return nil }

// RenderMemo keeps what Render made of each object, for the renders given
// it (WithRenderMemo): an object rendered again under a Kustomization
// with the same name, namespace, commonMetadata and substitutions (two
// revisions of a tree share most of their objects) is taken from it. It
// holds the output, secrets substituted in included, for as long as it is
// kept, within a bound (16,384 objects, 32 MiB). It is safe for
// concurrent use; its zero value is empty.
type RenderMemo struct{ m memo.Bounded[renderedObject] }

// WithRenderMemo makes Render keep what it makes of each object in m, and
// take it from there when it meets the same object again.
func WithRenderMemo(m *RenderMemo) RenderOption { return memoOption{m} }

type memoOption struct{ m *RenderMemo }

func (o memoOption) applyToRender(r *renderOptions) error {
	if o.m == nil {
		return fmt.Errorf("%w: WithRenderMemo: nil RenderMemo", ErrInvalidOption)
	}
	r.memo = o.m
	return nil
}

// Render does to the objects of a Kustomization's build what
// kustomize-controller does after the build, and prints them as `flux build
// kustomization` does:
//
//  1. spec.postBuild substitutes every object (see Substituter), with
//     substituteFrom satisfied from WithSources;
//  2. the kustomize.toolkit.fluxcd.io/name and /namespace labels and
//     spec.commonMetadata are set;
//  3. each object is printed with sorted keys, followed by "---".
//
// It works on every core, with the outcome of Flux's sequential loop: the
// first object in order that fails substitution, or whose new ID another
// object holds at that point, is the error. Package fluxbuild's Preview
// builds the objects and calls it.
func Render(ks *kustomizev1.Kustomization, ress []*resource.Resource, opts ...RenderOption) ([]byte, error) {
	o := renderOptions{strict: true}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil RenderOption", ErrInvalidOption)
		}
		if err := opt.applyToRender(&o); err != nil {
			return nil, err
		}
	}
	return render(ress, ks, o)
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

// render is Render with its options read.
func render(ress []*resource.Resource, ks *kustomizev1.Kustomization, o renderOptions) ([]byte, error) {
	var real, masked *Substituter
	if ks.Spec.PostBuild != nil {
		real = &Substituter{ks: ks, src: o.sources, strict: o.strict}
		real.load()
		if o.redact && o.sources != nil {
			if m := o.sources.redacted(); m != nil {
				masked = &Substituter{ks: ks, src: m, strict: o.strict}
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
	var key []byte
	if o.memo != nil {
		key = renderKey(real, masked, ks)
	}
	parallel.For(len(ress), func(i int) {
		r := ress[i]
		if out, after, ok := fastObject(r, real, masked, ks, o.memo, key); ok {
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
		data, err := yamlutil.Marshal(obj)
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
//
// With a memo (rm) and key (renderKey), what it makes of an object is kept by
// key and the object's JSON, and taken from there when the same object
// renders again under the same Kustomization: both sides of a review
// render the objects of the files a change leaves alone.
func fastObject(r *resource.Resource, real, masked *Substituter, ks *kustomizev1.Kustomization, rm *RenderMemo, key []byte) (out []byte, after idKey, ok bool) {
	m, j0, err := objectJSON(r)
	if err != nil {
		return nil, idKey{}, false
	}
	if rm != nil && key != nil {
		h := sha256.New()
		h.Write(key)
		h.Write(j0)
		k := string(h.Sum(nil))
		if v, ok := rm.m.Load(k); ok {
			return v.out, v.after, true
		}
		defer func() {
			if ok {
				rm.m.Store(k, renderedObject{out: out, after: after}, len(out))
			}
		}()
	}
	var y0 []byte // the YAML substitution reads, straight from the map when it can be
	lit := false
	if real != nil {
		y0, lit = substitutionYAML(m, j0)
	}
	// j is what Flux applies, shown what Preview prints (masked); a
	// substituted object's numbers pass through float64 (readBack).
	j, shown := j0, j0
	jBack, shownBack := false, false
	if real != nil {
		j1, done, err := real.substituteJSON(r, j0, y0, lit)
		if err != nil {
			return nil, idKey{}, false
		}
		if done {
			j, shown, jBack, shownBack = j1, j1, true, true
		}
		if masked != nil {
			jm, done, err := masked.substituteJSON(r, j0, y0, lit)
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
	data, ok := yamlutil.ObjectYAML(obj.Object)
	if !ok {
		if data, err = yamlutil.Marshal(obj); err != nil {
			return nil, idKey{}, false
		}
	}
	return append(data, "---\n"...), after, true
}

// renderedObject is what fastObject made of an object: the chunk it
// prints and the object's ID after substitution. Its bytes are shared:
// read them only.
type renderedObject struct {
	out   []byte
	after idKey
}

// renderKey returns a hash two renders share exactly when fastObject
// makes the same of an object under both: of the substitutions (Key, with
// and without redaction), the Kustomization's name and namespace (Flux's
// labels) and its commonMetadata. It is nil (keep nothing) when a
// Substituter's variables cannot be loaded: fastObject then takes the slow
// path, which says why. An object's key is the hash of this and its JSON.
func renderKey(real, masked *Substituter, ks *kustomizev1.Kustomization) []byte {
	h := sha256.New()
	for _, s := range []*Substituter{real, masked} {
		if s == nil {
			h.Write([]byte{0})
			continue
		}
		k, err := s.Key()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "\x01%d:%s", len(k), k)
	}
	meta, err := json.Marshal(ks.Spec.CommonMetadata) // maps in key order
	if err != nil {
		return nil
	}
	fmt.Fprintf(h, "%d:%s%d:%s%d:%s", len(ks.Name), ks.Name, len(ks.Namespace), ks.Namespace, len(meta), meta)
	return h.Sum(nil)
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
	if lbs := withEntries(obj.GetLabels(), labels); len(lbs) > 0 {
		obj.SetLabels(lbs)
	}
	if ans := withEntries(obj.GetAnnotations(), annotations); len(ans) > 0 {
		obj.SetAnnotations(ans)
	}
}

// withEntries is m (a copy the object gave, or nil) with add's entries
// set, add winning.
func withEntries(m, add map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, add)
	return m
}
