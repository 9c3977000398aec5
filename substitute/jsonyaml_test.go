package substitute

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigyaml "sigs.k8s.io/yaml"
)

// FuzzJSONToYAML holds jsonToYAML to sigs.k8s.io/sigyaml.JSONToYAML, byte for
// byte and error for error, on the input as given and on what
// encoding/json writes for it (the JSON Preview feeds it).
func FuzzJSONToYAML(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"b":"1"}},"data":{"k":"v"}}`,
		`{"n":[1,-0,1.5,1e3,1E+400,9007199254740993,18446744073709551615,18446744073709551616,-9223372036854775809,0.000001,1e21]}`,
		`{"s":["yes","no","on","~","null","2001-12-14","0x1F","1_000",".inf","<<","a: b","- x","#c","\u007f","\u0085","\ufeff","\ud83d\ude00","\u2028"]}`,
		`{"<<":{"a":1},"b":null,"c":true,"d":{},"e":[],"f":""}`,
		`{"a10":1,"a9":2,"A":3,"_":4,"1":5,"10":6,"2":7}`,
		"{\"k\":\"a\x7fb\"}",
		"{\"k\":\"\xc2\x80\"}",
		`[1, {"a" : "b"}]  `,
		`{} {}`,
		`"top"`,
		``,
		`{"k": "multi\nline\n", "t": "tab\there", "q": "'\"", "lead": " x", "trail": "x "}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(in []byte) {
			if _, ok := yamlValues(in); !ok {
				return // jsonToYAML is JSONToYAML
			}
			want, wantErr := sigyaml.JSONToYAML(in)
			got, gotErr := jsonToYAML(in)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("%q: JSONToYAML error %v, jsonToYAML error %v", in, wantErr, gotErr)
			}
			// sigyaml.v2's key order is not total for some keys ("020C7",
			// "1000B1"), so JSONToYAML itself varies with map order.
			for i := 0; i < 50 && string(want) != string(got); i++ {
				want, _ = sigyaml.JSONToYAML(in)
			}
			require.Equal(t, string(want), string(got), "%q", in)
		}
		check([]byte(s))
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			j, err := json.Marshal(v)
			require.NoError(t, err)
			check(j)
		}
	})
}

// TestJSONToYAMLTakesTheFastWay: the objects Preview sees do not fall back
// to JSONToYAML (else the fast way would be dead code).
func TestJSONToYAMLTakesTheFastWay(t *testing.T) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"b":"1"}},"data":{"k":"v \u003c\u0026 é 😀"}}`,
		`{"spec":{"replicas":3,"ratio":0.5,"big":1e+21,"list":[true,null,"x"]}}`,
	} {
		_, ok := yamlValues([]byte(s))
		require.True(t, ok, s)
	}
	_, ok := yamlValues([]byte("{\"k\":\"a\x7fb\"}"))
	require.False(t, ok, "DEL is not YAML")
}

// FuzzObjectYAML holds Preview's JSON-free steps to the ones they stand
// for: objectYAML to sigs.k8s.io/sigyaml.Marshal on what sigyaml.v3 decodes from
// a manifest, and decodeObject to unstructured.UnmarshalJSON (after Flux's
// float64 read-back when readBack).
func FuzzObjectYAML(f *testing.F) {
	f.Add("kind: ConfigMap\nmetadata: {name: a, labels: {b: '1'}}\ndata: {k: v}\n", false)
	f.Add("n: [1, -0, -0.0, 1.5, 1e3, 9007199254740993, 18446744073709551615, 1e20, 0x1F, 0o14, .inf]\n", true)
	f.Add("s: [yes, 'no', '~', null, 2001-12-14, \"\\x7f\", \"\\x85\", \"\\u2028\", \"\\ufffe\", '<<']\n", false)
	f.Add("'<<': {a: 1}\nb: {}\nc: []\nd: true\n", true)
	f.Add("a10: 1\na9: 2\n1: x\n", false)
	f.Fuzz(func(t *testing.T, manifest string, readBack bool) {
		if len(manifest) > 1000 {
			return
		}
		m := map[string]any{}
		if yaml.Unmarshal([]byte(manifest), &m) != nil {
			return
		}
		same := func(what string, obj map[string]any) {
			got, ok := objectYAML(obj)
			if !ok {
				return // the caller takes yamlMarshal
			}
			want, err := sigyaml.Marshal(obj)
			require.NoError(t, err, "%s: objectYAML took what sigyaml.Marshal refuses", what)
			for i := 0; i < 50 && string(want) != string(got); i++ {
				want, _ = sigyaml.Marshal(obj) // sigyaml.v2's key order is not total
			}
			require.Equal(t, string(want), string(got), "%s of %q", what, manifest)
		}
		same("the decoded manifest", m)
		j, err := json.Marshal(m)
		if err != nil {
			return
		}
		ref := j
		if readBack {
			var back map[string]any
			require.NoError(t, json.Unmarshal(j, &back))
			ref, err = json.Marshal(back)
			require.NoError(t, err)
		}
		want := &unstructured.Unstructured{}
		wantErr := want.UnmarshalJSON(ref)
		got, ok := decodeObject(j, readBack)
		if !ok {
			return // plainObject says no, and Flux's steps are taken
		}
		if wantErr != nil {
			// unstructured refuses objects without a kind; the values must
			// still be what it makes of them with one.
			ref2 := strings.Replace(string(ref), "{", `{"kind":"X",`, 1)
			if _, hasKind := got["kind"]; hasKind || want.UnmarshalJSON([]byte(ref2)) != nil {
				return
			}
			got["kind"] = "X"
		}
		require.Equal(t, want.Object, got, "decodeObject of %s", j)
		same("the decoded JSON", got)
	})
}
