package substitute

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/envsubst"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/resource"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/suggest"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// DisabledKey is the label or annotation that, set to "disabled", makes
// kustomize-controller leave an object's variables alone.
const DisabledKey = "kustomize.toolkit.fluxcd.io/substitute"

// Sources holds the ConfigMaps and Secrets that spec.postBuild.substituteFrom
// can name. An object without a namespace matches any Kustomization's
// namespace.
type Sources struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// NewSources returns Sources holding objs (*corev1.ConfigMap or
// *corev1.Secret; Secret stringData is folded into data, as the API server
// does).
func NewSources(objs ...runtime.Object) (*Sources, error) {
	s := &Sources{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			s.configMaps[o.Namespace+"/"+o.Name] = o
		case *corev1.Secret:
			o = o.DeepCopy()
			for k, v := range o.StringData {
				if o.Data == nil {
					o.Data = map[string][]byte{}
				}
				o.Data[k] = []byte(v)
			}
			o.StringData = nil
			s.secrets[o.Namespace+"/"+o.Name] = o
		default:
			return nil, fmt.Errorf("%w: substituteFrom sources are ConfigMaps and Secrets, not %T", ErrWrongShape, obj)
		}
	}
	return s, nil
}

// Objects returns the ConfigMaps and then the Secrets s holds, each sorted
// by namespace and name.
func (s *Sources) Objects() []runtime.Object {
	var out []runtime.Object
	for _, k := range slices.Sorted(maps.Keys(s.configMaps)) {
		out = append(out, s.configMaps[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.secrets)) {
		out = append(out, s.secrets[k])
	}
	return out
}

// sourceCodecs decodes ConfigMaps and Secrets. The scheme is built on first
// use, not at init: every fluxpack command runs the package inits.
var sourceCodecs = sync.OnceValue(func() serializer.CodecFactory {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return serializer.NewCodecFactory(s)
})

// ReadSources reads ConfigMaps and Secrets from YAML files (several
// documents per file allowed; other kinds are an error).
func ReadSources(paths ...string) (*Sources, error) {
	var objs []runtime.Object
	for _, p := range paths {
		data, err := inputfile.Read(p)
		if err != nil {
			return nil, fmt.Errorf("reading substituteFrom source: %w", err)
		}
		got, err := decodeSources(p, data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	return NewSources(objs...)
}

func decodeSources(path string, data []byte) ([]runtime.Object, error) {
	var objs []runtime.Object
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fileErr(path, 0, fmt.Errorf("%w: document %d: invalid YAML", ErrMalformed, n))
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := sourceCodecs().UniversalDeserializer().Decode(doc, nil, nil)
		switch obj.(type) {
		case *corev1.ConfigMap, *corev1.Secret:
			if err == nil {
				objs = append(objs, obj)
				continue
			}
		}
		return nil, fileErr(path, 0, fmt.Errorf("%w: document %d: want a v1 ConfigMap or Secret", ErrWrongShape, n))
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) == 0 || t[0] == '#' || bytes.Equal(t, []byte("---")) {
			continue
		}
		out = append(out, l...)
	}
	return out
}

// Vars returns the variables kustomize-controller substitutes for ks: the
// data of each substituteFrom ConfigMap and the decoded data of each Secret,
// in order (a later one wins; a missing one is ErrSourceNotFound unless
// optional; kinds other than ConfigMap and Secret are skipped, as Flux
// does), then the inline spec.postBuild.substitute, which wins. Every "\n"
// is removed from every value. Names are not checked here (see
// InvalidVarNames).
func Vars(ks *kustomizev1.Kustomization, src *Sources) (map[string]string, error) {
	vars := map[string]string{}
	if ks.Spec.PostBuild == nil {
		return vars, nil
	}
	if src == nil {
		src = &Sources{}
	}
	for _, ref := range ks.Spec.PostBuild.SubstituteFrom {
		if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
			continue
		}
		data, ok := src.data(ref.Kind, ks.Namespace, ref.Name)
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, fmt.Errorf("%w: %s/%s/%s", ErrSourceNotFound, ref.Kind, ks.Namespace, ref.Name)
		}
		for k, v := range data {
			vars[k] = strings.ReplaceAll(v, "\n", "")
		}
	}
	for k, v := range ks.Spec.PostBuild.Substitute {
		vars[k] = strings.ReplaceAll(v, "\n", "")
	}
	return vars, nil
}

// data is the data of the ConfigMap, or the decoded data of the Secret,
// named namespace/name, else of the one of that name given without a
// namespace; false when there is neither.
func (s *Sources) data(kind, namespace, name string) (map[string]string, bool) {
	switch kind {
	case "ConfigMap":
		if cm := lookup(s.configMaps, namespace, name); cm != nil {
			return cm.Data, true
		}
	case "Secret":
		if sec := lookup(s.secrets, namespace, name); sec != nil {
			data := make(map[string]string, len(sec.Data))
			for k, v := range sec.Data {
				data[k] = string(v)
			}
			return data, true
		}
	}
	return nil, false
}

// lookup is m's namespace/name, else its "/name" (a source given without
// a namespace, which serves every namespace).
func lookup[T any](m map[string]*T, namespace, name string) *T {
	if o := m[namespace+"/"+name]; o != nil {
		return o
	}
	return m["/"+name]
}

// InvalidVarNames returns the names of vars that Flux rejects, sorted.
// Flux fails the whole Kustomization on any of them, used or not.
func InvalidVarNames(vars map[string]string) []string {
	var bad []string
	for _, k := range sortedKeys(vars) {
		if !ValidVarName(k) {
			bad = append(bad, k)
		}
	}
	return bad
}

// SubstituterOption configures NewSubstituter. Only this package
// implements it; WithSources and WithStrict configure Render too.
type SubstituterOption interface {
	applyToSubstituter(*Substituter) error
}

// SharedOption configures both NewSubstituter and Render.
type SharedOption interface {
	SubstituterOption
	RenderOption
}

var (
	_ SharedOption = sourcesOption{}
	_ SharedOption = strictOption(false)
	_ SharedOption = varsFromOption(nil)
	_ RenderOption = redactOption{}
)

// WithStrict turns strict mode on or off. It is on by default, as in
// kustomize-controller since v1.9.0: a variable without a value or a
// default is an error. Off, it becomes "" (what `flux build` does without
// --strict-substitute).
func WithStrict(strict bool) SharedOption { return strictOption(strict) }

type strictOption bool

func (o strictOption) applyToSubstituter(s *Substituter) error { s.strict = bool(o); return nil }
func (o strictOption) applyToRender(r *renderOptions) error    { r.strict = bool(o); return nil }

// WithVarsFrom satisfies spec.postBuild.substituteFrom from the ConfigMaps
// and Secrets of YAML files (ReadSources); it fails on a file it cannot
// read. Given with WithSources, the sources add up (the later wins a
// clash).
func WithVarsFrom(paths ...string) SharedOption { return varsFromOption(paths) }

type varsFromOption []string

func (o varsFromOption) sources() (*Sources, error) {
	for _, p := range o {
		if p == "" {
			return nil, fmt.Errorf("%w: WithVarsFrom: empty path", ErrInvalidOption)
		}
	}
	return ReadSources(o...)
}

func (o varsFromOption) applyToSubstituter(s *Substituter) error {
	src, err := o.sources()
	if err != nil {
		return err
	}
	return sourcesOption{src}.applyToSubstituter(s)
}

func (o varsFromOption) applyToRender(r *renderOptions) error {
	src, err := o.sources()
	if err != nil {
		return err
	}
	return sourcesOption{src}.applyToRender(r)
}

// WithSources satisfies spec.postBuild.substituteFrom from src (see
// ReadSources, NewSources). Without it every substituteFrom reference is
// missing.
func WithSources(src *Sources) SharedOption { return sourcesOption{src} }

type sourcesOption struct{ src *Sources }

// addTo merges the option's sources into *dst, which may be unset.
func (o sourcesOption) addTo(dst **Sources) error {
	if o.src == nil {
		return fmt.Errorf("%w: WithSources: nil sources", ErrInvalidOption)
	}
	if *dst != nil {
		*dst = (*dst).merge(o.src)
	} else {
		*dst = o.src
	}
	return nil
}

func (o sourcesOption) applyToSubstituter(s *Substituter) error { return o.addTo(&s.src) }

func (o sourcesOption) applyToRender(r *renderOptions) error { return o.addTo(&r.sources) }

// Substituter applies one Kustomization's spec.postBuild to resources,
// step for step as kustomize-controller (fluxcd/pkg/kustomize
// SubstituteVariables) does. It is safe for concurrent use: the
// variables are read once, on first use, and only read after that.
type Substituter struct {
	ks     *kustomizev1.Kustomization
	src    *Sources
	strict bool

	once    sync.Once
	vars    map[string]string
	loadErr error
}

// NewSubstituter returns a Substituter for ks, with substituteFrom
// satisfied from WithSources.
func NewSubstituter(ks *kustomizev1.Kustomization, opts ...SubstituterOption) (*Substituter, error) {
	if ks == nil {
		return nil, fmt.Errorf("%w: nil Kustomization", ErrInvalidOption)
	}
	s := &Substituter{ks: ks, strict: true}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil SubstituterOption", ErrInvalidOption)
		}
		if err := o.applyToSubstituter(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Enabled reports whether ks has a postBuild at all; without one
// kustomize-controller does not call the substitution.
func (s *Substituter) Enabled() bool { return s.ks.Spec.PostBuild != nil }

// Resource substitutes the variables of res in place, exactly as
// kustomize-controller does:
//
//  1. res is re-serialised (JSON, then YAML), so source quotes and
//     comments are gone before substitution;
//  2. a resource labelled or annotated DisabledKey: disabled is left alone;
//  3. the variables are loaded (see Vars), once per Substituter;
//  4. with no variables nothing happens, unless substituteStrategy is
//     Always;
//  5. every variable name must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$;
//  6. envsubst.Eval runs on the YAML text (strict unless WithStrict(false)),
//     and the result is read back with YAML 1.1 typing (sigs.k8s.io/yaml).
//
// It reports whether res was substituted. Errors name the object. When
// Idle says nothing can be substituted, res is not serialised at all: only
// an object that cannot be serialised and meets a variable that cannot be
// loaded sees another error than kustomize-controller's (it serialises
// first).
func (s *Substituter) Resource(res *resource.Resource) (bool, error) {
	if !s.Enabled() {
		return false, nil
	}
	if idle, err := s.Idle(); idle {
		if disabled(res) {
			return false, nil
		}
		return false, err
	}
	out, done, err := s.JSON(res)
	if err != nil || !done {
		return false, err
	}
	if err := res.UnmarshalJSON(out); err != nil {
		return false, &ObjectError{Object: resName(res), Err: fmt.Errorf("reading back the substituted object: %w", err)}
	}
	return true, nil
}

// JSON returns the JSON of res as Resource would leave it, without
// changing res (only read: it may hold another's nodes), and whether it
// substitutes at all (else the JSON is res's as it is). Errors are
// Resource's, but that res is serialised first, even when Idle.
func (s *Substituter) JSON(res *resource.Resource) ([]byte, bool, error) {
	m, j0, err := objectJSON(res) // res.MarshalJSON, without its YAML round trip
	if err != nil {
		return nil, false, &ObjectError{Object: resName(res), Err: fmt.Errorf("serialising: %w", err)}
	}
	if idle, err := s.Idle(); idle {
		if err != nil && disabled(res) {
			err = nil
		}
		return j0, false, err
	}
	y0, lit := substitutionYAML(m, j0)
	out, done, err := s.substituteJSON(res, j0, y0, lit)
	if err != nil || !done {
		return j0, false, err
	}
	return out, true, nil
}

// substitutionYAML is what substituteJSON reads of an object, given its
// map m (nil when it has none) and JSON j0: whether substitution leaves it
// as it is (literal), else its YAML (res.AsYAML) straight from the map when
// it can be made so, or nil to make it from j0.
func substitutionYAML(m map[string]any, j0 []byte) (y0 []byte, lit bool) {
	if literal(j0) {
		return nil, true
	}
	if m != nil {
		y0, _ = yamlutil.ObjectYAML(m)
	}
	return y0, false
}

// substituteJSON is Resource up to reading the result back: given j0, the
// JSON of res (res.MarshalJSON), and y0 and lit, what substitutionYAML
// says of it, it returns the JSON kustomize-controller reads back into
// res, and whether res is substituted at all. An object substitution
// cannot change (lit) is read back as it was: no YAML is made of it. It
// only reads res, so that Preview can go on from the JSON.
func (s *Substituter) substituteJSON(res *resource.Resource, j0, y0 []byte, lit bool) ([]byte, bool, error) {
	if !s.Enabled() {
		return nil, false, nil
	}
	data := y0 // what res.AsYAML() returns, if the caller has it
	if data == nil && !lit {
		var err error
		if data, err = yamlutil.JSONToYAML(j0); err != nil {
			return nil, false, &ObjectError{Object: resName(res), Err: fmt.Errorf("serialising: %w", err)}
		}
	}
	if disabled(res) {
		return nil, false, nil
	}
	s.load()
	if s.loadErr != nil {
		return nil, false, s.loadErr
	}
	if len(s.vars) == 0 && s.ks.GetSubstituteStrategy() != kustomizev1.SubstituteStrategyAlways {
		return nil, false, nil
	}
	if lit {
		if err := s.checkNames(); err != nil {
			return nil, false, &ObjectError{Object: resName(res), Err: err}
		}
		return j0, true, nil
	}
	out, err := s.eval(data)
	if err != nil {
		return nil, false, &ObjectError{Object: resName(res), Err: err}
	}
	return out, true, nil
}

// Idle reports whether Resource leaves every resource as it is: there are
// no variables and the strategy is not Always, or (with the error) the
// variables cannot be loaded, which Resource returns for every resource not
// labelled or annotated DisabledKey: disabled. A caller with many objects
// asks once instead of serialising each.
func (s *Substituter) Idle() (bool, error) {
	if !s.Enabled() {
		return true, nil
	}
	s.load()
	if s.loadErr != nil {
		return true, s.loadErr
	}
	return len(s.vars) == 0 && s.ks.GetSubstituteStrategy() != kustomizev1.SubstituteStrategyAlways, nil
}

// Key returns a text two Substituter values share exactly when Resource
// does the same to every resource: their variables, whether an unset one
// fails (WithStrict) and the substitute strategy. It is "" for a Kustomization
// without postBuild, and the error is Idle's when the variables cannot be
// loaded. A caller that substitutes the same objects again (both sides of a
// review) keys what it keeps by it.
func (s *Substituter) Key() (string, error) {
	if !s.Enabled() {
		return "", nil
	}
	s.load()
	if s.loadErr != nil {
		return "", s.loadErr
	}
	var b strings.Builder
	fmt.Fprintf(&b, "strict=%t\x00strategy=%s\x00", s.strict, s.ks.GetSubstituteStrategy())
	for _, k := range slices.Sorted(maps.Keys(s.vars)) {
		fmt.Fprintf(&b, "%d:%s=%d:%s\x00", len(k), k, len(s.vars[k]), s.vars[k])
	}
	return b.String(), nil
}

// disabled reports whether res opts out of substitution (DisabledKey).
func disabled(res *resource.Resource) bool {
	return res.GetLabels()[DisabledKey] == "disabled" || res.GetAnnotations()[DisabledKey] == "disabled"
}

// load reads the variables, once. After it, Resource only reads the
// Substituter.
func (s *Substituter) load() {
	s.once.Do(func() { s.vars, s.loadErr = Vars(s.ks, s.src) })
}

// eval is Flux's varSubstitution.
func (s *Substituter) eval(data []byte) ([]byte, error) {
	if err := s.checkNames(); err != nil {
		return nil, err
	}
	var missing string // the last variable asked for that is not set
	out, err := envsubst.Eval(string(data), func(name string) (string, bool) {
		v, ok := s.vars[name]
		if !ok {
			missing = name
		}
		return v, ok || !s.strict
	})
	if err != nil {
		// envsubst's strict error is unexported; its text is its API. It
		// stops at the variable it names, the last one it asked for.
		if msg := err.Error(); strings.HasPrefix(msg, ErrVarNotSet.Error()) {
			hint := ""
			if missing != "" {
				hint = suggest.DidYouMean(missing, slices.Sorted(maps.Keys(s.vars)))
			}
			return nil, fmt.Errorf("substituting variables: %w%s%s", ErrVarNotSet, strings.TrimPrefix(msg, ErrVarNotSet.Error()), hint)
		}
		return nil, fmt.Errorf("substituting variables: %w", err)
	}
	j, err := sigyaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("reading the substituted YAML: %w", err)
	}
	return j, nil
}

// checkNames is Flux's refusal of a variable name envsubst cannot take,
// which comes before any object is read.
func (s *Substituter) checkNames() error {
	if bad := InvalidVarNames(s.vars); len(bad) > 0 {
		return errdefs.Kind(ErrInvalidName, "invalid variable name %q: must match %s", bad[0], VarNamePattern)
	}
	return nil
}

// resName names a resource as Kind/namespace/name (Kind/name without one).
func resName(res *resource.Resource) string {
	if ns := res.GetNamespace(); ns != "" {
		return res.GetKind() + "/" + ns + "/" + res.GetName()
	}
	return res.GetKind() + "/" + res.GetName()
}
