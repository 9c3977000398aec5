package substitute_test

// The differential tests: the same Kustomization, resources and
// substituteFrom sources go through Flux's own code (fluxcd/pkg/kustomize
// SubstituteVariables, with a controller-runtime fake client serving the
// ConfigMaps and Secrets) and through package substitute; the output must be
// identical, or both must fail. Flux's heavy dependencies are imported only
// here, in _test.go files, so the library's import graph stays free of them.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/substitute"
)

// diffCase is one input for both implementations.
type diffCase struct {
	name    string
	ks      string // the Kustomization's spec.postBuild, as YAML under "postBuild:"
	objs    string // the resources, a YAML stream
	sources string // ConfigMaps and Secrets for substituteFrom, a YAML stream
	lax     bool   // strict mode off
	wantErr bool   // what both must do; checked so a case cannot pass by accident
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: apps\ndata:\n"

var diffCases = []diffCase{
	// Re-serialisation first: quotes and comments are gone before substitution.
	{name: "quoted number becomes int", ks: "substitute: {r: '3'}", objs: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: apps}\nspec:\n  replicas: \"${r}\"\n"},
	{name: "yaml 1.1 key n becomes false", ks: "substitute: {n: '3'}", objs: cm + "  k: ${n}\n", wantErr: true},
	{name: "quoted string stays string when not numeric", ks: "substitute: {v: abc}", objs: cm + "  k: \"${v}\"\n"},
	{name: "comment with var is dropped", ks: "substitute: {v: x}", objs: cm + "  k: a # ${missing}\n"},
	{name: "single quoted var", ks: "substitute: {v: x}", objs: cm + "  k: '${v}'\n"},
	{name: "flow style source", ks: "substitute: {v: x}", objs: "{apiVersion: v1, kind: ConfigMap, metadata: {name: app}, data: {k: '${v}'}}\n"},
	{name: "json source", ks: "substitute: {v: x}", objs: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"${v}"}}`},
	// The disabled label and annotation.
	{name: "disabled label", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: ${v}-${missing}\n"},
	{name: "disabled annotation", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: ${missing}\n"},
	{name: "disabled is case sensitive", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: Disabled}\ndata:\n  k: ${v}\n"},
	{name: "enabled value does nothing special", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {kustomize.toolkit.fluxcd.io/substitute: enabled}\ndata:\n  k: ${v}\n"},
	{name: "disabled one of two", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: ${v}\n---\n" + cm + "  k: ${v}\n"},
	// substituteFrom: order, optional, kinds.
	{name: "from configmap", ks: "substituteFrom: [{kind: ConfigMap, name: vars}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars}\ndata: {region: eu-west-3}\n", objs: cm + "  k: ${region}\n"},
	{name: "from secret", ks: "substituteFrom: [{kind: Secret, name: vars}]", sources: "apiVersion: v1\nkind: Secret\nmetadata: {name: vars}\ndata: {token: aHVudGVyMg==}\n", objs: cm + "  k: ${token}\n"},
	{name: "later source wins", ks: "substituteFrom: [{kind: ConfigMap, name: a}, {kind: ConfigMap, name: b}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: from-a, only_a: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {v: from-b}\n", objs: cm + "  k: ${v}-${only_a}\n"},
	{name: "secret after configmap wins", ks: "substituteFrom: [{kind: ConfigMap, name: a}, {kind: Secret, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: cm}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {v: c2VjcmV0}\n", objs: cm + "  k: ${v}\n"},
	{name: "configmap after secret wins", ks: "substituteFrom: [{kind: Secret, name: a}, {kind: ConfigMap, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: cm}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {v: c2VjcmV0}\n", objs: cm + "  k: ${v}\n"},
	{name: "inline wins over sources", ks: "substitute: {v: inline}\nsubstituteFrom: [{kind: ConfigMap, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {v: cm, w: cm}\n", objs: cm + "  k: ${v}-${w}\n"},
	{name: "missing configmap fails", ks: "substituteFrom: [{kind: ConfigMap, name: nope}]", objs: cm + "  k: x\n", wantErr: true},
	{name: "missing secret fails", ks: "substituteFrom: [{kind: Secret, name: nope}]", objs: cm + "  k: x\n", wantErr: true},
	{name: "missing optional configmap", ks: "substituteFrom: [{kind: ConfigMap, name: nope, optional: true}]\nsubstitute: {v: x}", objs: cm + "  k: ${v}\n"},
	{name: "missing optional secret only", ks: "substituteFrom: [{kind: Secret, name: nope, optional: true}]", objs: cm + "  k: ${v}\n"},
	{name: "missing source, one disabled and one not", ks: "substituteFrom: [{kind: ConfigMap, name: nope}]", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: x\n---\n" + cm + "  k: ${v}\n", wantErr: true},
	{name: "missing source but all disabled", ks: "substituteFrom: [{kind: ConfigMap, name: nope}]", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: x\n"},
	{name: "source in another namespace is not seen", ks: "substituteFrom: [{kind: ConfigMap, name: vars}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars, namespace: other}\ndata: {v: x}\n", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "unknown source kind is skipped", ks: "substituteFrom: [{kind: Bucket, name: x}]\nsubstitute: {v: y}", objs: cm + "  k: ${v}\n"},
	{name: "empty configmap gives no vars", ks: "substituteFrom: [{kind: ConfigMap, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", objs: cm + "  k: ${v}\n"},
	// Newline stripping.
	{name: "inline newline stripped", ks: "substitute: {v: \"a\\nb\\n\"}", objs: cm + "  k: ${v}\n"},
	{name: "configmap newline stripped", ks: "substituteFrom: [{kind: ConfigMap, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  v: |\n    line1\n    line2\n", objs: cm + "  k: ${v}\n"},
	{name: "secret newline stripped", ks: "substituteFrom: [{kind: Secret, name: a}]", sources: "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {v: bGluZTEKbGluZTIK}\n", objs: cm + "  k: ${v}\n"},
	{name: "carriage return breaks the YAML", ks: "substitute: {v: \"a\\rb\"}", objs: cm + "  k: \"${v}\"\n", wantErr: true},
	// Name validation of every loaded variable.
	{name: "invalid inline name unused", ks: "substitute: {v: x, my-var: y}", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "invalid name from configmap", ks: "substituteFrom: [{kind: ConfigMap, name: a}]", sources: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {vpc-id: x, v: y}\n", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "leading digit name", ks: "substitute: {1st: x}", objs: cm + "  k: y\n", wantErr: true},
	{name: "underscore name", ks: "substitute: {_1st: x}", objs: cm + "  k: ${_1st}\n"},
	{name: "dotted name", ks: "substitute: {a.b: x}", objs: cm + "  k: y\n", wantErr: true},
	{name: "yaml 1.1 key yes becomes true", ks: "substitute: {yes: x}", objs: cm + "  k: ${yes}\n", wantErr: true},
	{name: "yaml 1.1 key on becomes true and is used", ks: "substitute: {on: x}", objs: cm + "  k: ${true}\n"},
	{name: "invalid name but all disabled", ks: "substitute: {my-var: x}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}\ndata:\n  k: x\n"},
	// substituteStrategy.
	{name: "no vars leaves text", ks: "substituteFrom: [{kind: ConfigMap, name: nope, optional: true}]", objs: cm + "  k: ${v:=d} $${x}\n"},
	{name: "always with defaults", ks: "substituteStrategy: Always", objs: cm + "  k: ${v:=d}\n"},
	{name: "always and missing fails", ks: "substituteStrategy: Always", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "always escapes dollars", ks: "substituteStrategy: Always", objs: cm + "  k: $${x}\n"},
	{name: "with variables explicit", ks: "substituteStrategy: WithVariables", objs: cm + "  k: ${v}\n"},
	{name: "empty postBuild", ks: "{}", objs: cm + "  k: ${v}\n"},
	// Strict mode.
	{name: "strict missing fails", ks: "substitute: {v: x}", objs: cm + "  k: ${m}\n", wantErr: true},
	{name: "lax missing is empty", ks: "substitute: {v: x}", objs: cm + "  k: a${m}b\n", lax: true},
	{name: "lax missing whole value is null", ks: "substitute: {v: x}", objs: cm + "  k: ${m}\n", lax: true},
	{name: "strict missing in key fails", ks: "substitute: {v: x}", objs: cm + "  ${m}: x\n", wantErr: true},
	// Syntax.
	{name: "default colon equals", ks: "substitute: {v: x}", objs: cm + "  k: ${m:=def}\n"},
	{name: "default colon dash", ks: "substitute: {v: x}", objs: cm + "  k: ${m:-def}\n"},
	{name: "default equals", ks: "substitute: {v: x}", objs: cm + "  k: ${m=def}\n"},
	{name: "default used when empty", ks: "substitute: {v: \"\"}", objs: cm + "  k: ${v:=def}\n"},
	{name: "plus operator", ks: "substitute: {v: x}", objs: cm + "  k: ${v:+alt}-${m:+alt}\n"},
	{name: "dash without colon is a parse error", ks: "substitute: {v: x}", objs: cm + "  k: ${v-d}\n", wantErr: true},
	{name: "dotted reference is a parse error", ks: "substitute: {v: x}", objs: cm + "  k: ${a.b}\n", wantErr: true},
	{name: "dashed reference is a parse error", ks: "substitute: {v: x}", objs: cm + "  k: ${my-var}\n", wantErr: true},
	{name: "unclosed brace", ks: "substitute: {v: x}", objs: cm + "  k: ${v\n", wantErr: true},
	{name: "dollar var without braces untouched", ks: "substitute: {v: x}", objs: cm + "  k: $v and ${v}\n"},
	{name: "double dollar escapes", ks: "substitute: {v: x}", objs: cm + "  k: $${v} $$ $$$${v}\n"},
	{name: "values are not rescanned", ks: "substitute: {v: \"${w}\", w: y}", objs: cm + "  k: ${v}\n"},
	{name: "substring", ks: "substitute: {v: abcdef}", objs: cm + "  k: ${v:1:3}\n"},
	{name: "replace first and all", ks: "substitute: {v: a-b-c}", objs: cm + "  k: ${v/-/_}|${v//-/_}\n"},
	{name: "case operators", ks: "substitute: {v: hello}", objs: cm + "  k: ${v^}|${v^^}|${v,}\n"},
	{name: "length", ks: "substitute: {v: hello}", objs: cm + "  k: ${#v}\n"},
	{name: "trim prefix and suffix", ks: "substitute: {v: a.b.c}", objs: cm + "  k: ${v#*.}|${v##*.}|${v%.*}|${v%%.*}\n"},
	{name: "nested default", ks: "substitute: {w: inner}", objs: cm + "  k: ${m:=${w}}\n"},
	// YAML 1.1 typing after substitution.
	{name: "leading zero becomes octal", ks: "substitute: {v: \"0123\"}", objs: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: ${v}\n"},
	{name: "leading zero in configmap value", ks: "substitute: {v: \"0123\"}", objs: cm + "  k: ${v}\n"},
	{name: "yes becomes bool", ks: "substitute: {v: \"yes\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  enabled: ${v}\n"},
	{name: "version 1.10 becomes 1.1", ks: "substitute: {v: \"1.10\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  version: ${v}\n"},
	{name: "colon space is a parse error", ks: "substitute: {v: \"a: b\"}", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "hash comment cuts", ks: "substitute: {v: \"a #b\"}", objs: cm + "  k: ${v}\n"},
	{name: "flow list", ks: "substitute: {v: \"[a, b]\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  list: ${v}\n"},
	{name: "json list from outputs", ks: `substitute: {v: '["subnet-1","subnet-2"]'}`, objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  subnets: ${v}\n"},
	{name: "json map from outputs", ks: `substitute: {v: '{"a":1,"b":"x: y"}'}`, objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  tags: ${v}\n"},
	{name: "json string literal from outputs", ks: `substitute: {v: '"line1\nline2"'}`, objs: cm + "  k: ${v}\n"},
	{name: "tilde is null", ks: "substitute: {v: \"~\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  x: ${v}\n"},
	{name: "star alias is a parse error", ks: "substitute: {v: \"*x\"}", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "at sign is a parse error", ks: "substitute: {v: \"@x\"}", objs: cm + "  k: ${v}\n", wantErr: true},
	{name: "inside block scalar stays string", ks: "substitute: {v: \"0123\"}", objs: cm + "  values.yaml: |\n    tag: ${v}\n    other: 1\n"},
	{name: "substituted in the middle", ks: "substitute: {v: \"0123\"}", objs: cm + "  k: prefix-${v}\n"},
	{name: "big number in source becomes float", ks: "substitute: {v: x}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  big: 12345678901234567890\n  s: ${v}\n"},
	{name: "big number substituted", ks: "substitute: {v: \"12345678901234567890\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  big: ${v}\n"},
	{name: "float value", ks: "substitute: {v: \"1e3\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  f: ${v}\n"},
	{name: "quote trick", ks: "substitute: {quote: '\"', v: \"0123\"}", objs: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  tag: ${quote}${v}${quote}\n"},
	// Objects.
	{name: "var in name and namespace", ks: "substitute: {env: prod}", objs: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${env}\n  namespace: ns-${env}\ndata: {k: v}\n"},
	{name: "secret data base64 untouched", ks: "substitute: {v: x}", objs: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: JHt2fQ==}\nstringData: {t: '${v}'}\n"},
	{name: "multi-line string value in source", ks: "substitute: {v: x}", objs: cm + "  script: |\n    #!/bin/sh\n    echo ${v}\n    echo $HOME\n"},
	{name: "shell var in script fails strict", ks: "substitute: {v: x}", objs: cm + "  script: |\n    echo ${HOME}\n", wantErr: true},
	{name: "shell var escaped", ks: "substitute: {v: x}", objs: cm + "  script: |\n    echo $${HOME} ${v}\n"},
	{name: "unicode value", ks: "substitute: {v: \"héllo wörld ✓\"}", objs: cm + "  k: ${v}\n"},
	{name: "empty value", ks: "substitute: {v: \"\"}", objs: cm + "  k: ${v}\n  j: a${v}b\n"},
	{name: "value with quotes", ks: `substitute: {v: 'say "hi"'}`, objs: cm + "  k: ${v}\n"},
	{name: "value with backslash", ks: `substitute: {v: 'C:\path'}`, objs: cm + "  k: ${v}\n"},
	{name: "list of objects", ks: "substitute: {v: x}", objs: cm + "  k: ${v}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s-${v}\nspec:\n  ports: [{port: 80}]\n"},
}

func TestDifferentialAgainstFlux(t *testing.T) {
	require.GreaterOrEqual(t, len(diffCases), 60, "the differential test must cover at least 60 cases")
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			flux, fluxErr := runFlux(t, tc)
			ours, ourErr := runOurs(t, tc)
			if tc.wantErr {
				assert.Error(t, fluxErr, "Flux on %q: want an error", tc.name)
				assert.Error(t, ourErr, "substitute on %q: want an error like Flux", tc.name)
				return
			}
			require.NoError(t, fluxErr, "Flux on %q", tc.name)
			require.NoError(t, ourErr, "substitute on %q", tc.name)
			assert.Equal(t, flux, ours, "substitute and Flux differ on %q", tc.name)
		})
	}
}

func kustomization(t testing.TB, postBuild string) *kustomizev1.Kustomization {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: apps}\nspec:\n  interval: 1m\n  prune: true\n  sourceRef: {kind: OCIRepository, name: platform}\n  postBuild:\n")
	for _, l := range strings.Split(postBuild, "\n") {
		b.WriteString("    " + l + "\n")
	}
	ks := &kustomizev1.Kustomization{}
	require.NoError(t, sigyaml.Unmarshal([]byte(b.String()), ks), "parsing the case's Kustomization")
	return ks
}

func resources(data string) ([]*resource.Resource, error) {
	return provider.NewDefaultDepProvider().GetResourceFactory().SliceFromBytes([]byte(data))
}

func sourceObjects(t testing.TB, data string) []client.Object {
	t.Helper()
	var objs []client.Object
	for _, doc := range strings.Split(data, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var meta struct{ Kind string }
		require.NoError(t, sigyaml.Unmarshal([]byte(doc), &meta))
		var obj client.Object = &corev1.ConfigMap{}
		if meta.Kind == "Secret" {
			obj = &corev1.Secret{}
		}
		require.NoError(t, sigyaml.Unmarshal([]byte(doc), obj))
		if obj.GetNamespace() == "" {
			obj.SetNamespace("apps")
		}
		objs = append(objs, obj)
	}
	return objs
}

// runFlux does what kustomize-controller does after kustomize build.
func runFlux(t testing.TB, tc diffCase) (out string, err error) {
	t.Helper()
	ress, err := fluxResources(t, tc)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, res := range ress {
		y, err := res.AsYAML()
		if err != nil {
			return "", err
		}
		buf.Write(y)
		buf.WriteString("---\n")
	}
	return buf.String(), nil
}

// fluxResources are the case's resources as kustomize-controller's
// substitution leaves them.
func fluxResources(t testing.TB, tc diffCase) (ress []*resource.Resource, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("flux panicked: %v", r)
		}
	}()
	ks := kustomization(t, tc.ks)
	ress, err = resources(tc.objs)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sourceObjects(t, tc.sources)...).Build()
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	require.NoError(t, err)
	for _, res := range ress {
		if ks.Spec.PostBuild != nil {
			if _, err := fluxkustomize.SubstituteVariables(t.Context(), c, unstructured.Unstructured{Object: data}, res,
				fluxkustomize.SubstituteWithStrict(!tc.lax),
				fluxkustomize.SubstituteWithAlways(ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways)); err != nil {
				return nil, err
			}
		}
	}
	return ress, nil
}

func runOurs(t testing.TB, tc diffCase) (out string, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("substitute panicked: %v", r)
		}
	}()
	ks := kustomization(t, tc.ks)
	ress, err := resources(tc.objs)
	if err != nil {
		return "", err
	}
	var objs []runtime.Object
	for _, o := range sourceObjects(t, tc.sources) {
		objs = append(objs, o)
	}
	src, err := substitute.NewSources(objs...)
	require.NoError(t, err)
	s, err := substitute.NewSubstituter(ks, substitute.WithSources(src), substitute.WithStrict(!tc.lax))
	require.NoError(t, err)
	var buf bytes.Buffer
	for _, res := range ress {
		if _, err := s.Resource(res); err != nil {
			return "", err
		}
		y, err := res.AsYAML()
		if err != nil {
			return "", err
		}
		buf.Write(y)
		buf.WriteString("---\n")
	}
	return buf.String(), nil
}
