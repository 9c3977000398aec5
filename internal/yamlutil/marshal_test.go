package yamlutil

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"
)

// FuzzJSONToYAML holds JSONToYAML to sigs.k8s.io/yaml's JSONToYAML, byte for
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
				return // JSONToYAML is sigs.k8s.io/yaml's
			}
			want, wantErr := sigyaml.JSONToYAML(in)
			got, gotErr := JSONToYAML(in)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("%q: sigs.k8s.io/yaml error %v, JSONToYAML error %v", in, wantErr, gotErr)
			}
			// yaml.v2's key order is not total for some keys ("020C7",
			// "1000B1"), so sigs.k8s.io/yaml itself varies with map order.
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

// TestJSONToYAMLTakesTheFastWay: the objects fluxpack renders do not fall back
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
