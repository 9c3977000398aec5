package substitute

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"
)

// fluxWay is what kustomize-controller makes of an object's JSON j when it
// substitutes (res.AsYAML, envsubst, sigyaml.YAMLToJSON) and reads it back,
// with every variable set to "X": the way literal lets substituteJSON skip.
func fluxWay(t *testing.T, j []byte) map[string]any {
	t.Helper()
	y, err := sigyaml.JSONToYAML(j)
	require.NoError(t, err, "%s", j)
	out, err := envsubst.Eval(string(y), func(string) (string, bool) { return "X", true })
	require.NoError(t, err, "%s", j)
	back, err := sigyaml.YAMLToJSON([]byte(out))
	require.NoError(t, err, "%s", j)
	m, ok := decodeObject(back, true)
	require.True(t, ok, "%s", back)
	return m
}

// TestLiteral: every object literal takes comes back from Flux's way with
// the values it had, and literal refuses the shapes that way may change:
// a '$', a string sigyaml.v2 does not read back alike, numbers other than
// short integers. The objects are drawn at random from the characters and
// words YAML treats specially (a fixed seed, so a failure repeats).
func TestLiteral(t *testing.T) {
	for _, j := range []string{
		`{"a":"${v}"}`, `{"a":"$$"}`, `{"a$":1}`, // envsubst reads these
		`{"a":1.5}`, `{"a":1e3}`, `{"a":-0}`, `{"a":1234567890123456}`, // numbers sigyaml.v2 and float64 decide
		"{\"a\":\"\u2028\"}", "{\"a\":\"\u0085\"}", "{\"a\":\"\x7f\"}", `{"a":"\/"}`, // yamlutil.Readable refuses
		`{"<<":{"a":1}}`, `{"b":{"\u003c\u003c":false}}`, // sigyaml.v2 merges, or fails
		`{"a":"x`, // not JSON
	} {
		require.False(t, literal([]byte(j)), "%s", j)
	}
	for _, j := range []string{
		`{"a":0,"b":-1,"c":123456789012345,"d":-123456789012345,"e":[true,false,null]}`,
		`{"a":"1.5e3","b":"-0","c\"":"\\\"1e3"}`, // numbers in strings are text
	} {
		require.True(t, literal([]byte(j)), "%s", j)
	}

	words := []string{"yes", "No", "on", "OFF", "y", "~", "null", "Null", "true", "0x1F", "0o17", "017", "1_000",
		".inf", "-.Inf", ".nan", "2001-12-14", "12:30:00", "1e3", "-0", "+1", "<<", "=", "!tag", "&a", "*a",
		"? k", "- x", "a: b", "#c", "a #c", "|", ">-", "%YAML", "@x", "`x", "'q'", "\"dq\"", "{a}", "[b]", "a,b",
		"é", "✓", "\u00a0", "😀", "\ufeff", "\t", "\n", "\r\n", " ", "  ", "\\", "\\n", "\\u0041", "---", "..."}
	r := rand.New(rand.NewPCG(40, 2026))
	var str func() string
	str = func() string {
		var b strings.Builder
		for n := r.IntN(6); n >= 0; n-- {
			switch r.IntN(4) {
			case 0:
				b.WriteString(words[r.IntN(len(words))])
			case 1:
				b.WriteString(strings.Repeat("word ", r.IntN(30))) // long lines sigyaml.v2 folds
			default:
				b.WriteByte(byte(' ' + r.IntN(95)))
			}
		}
		return b.String()
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(9); {
		case k < 3 || depth > 3:
			return str()
		case k == 3:
			return []any{int64(r.IntN(100)) - 50, r.Int64N(1e15) - 5e14, r.Int64(), r.Float64() * 1e3, float64(r.IntN(9))}[r.IntN(5)]
		case k == 4:
			return []any{true, false, nil}[r.IntN(3)]
		case k == 5:
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for n := r.IntN(5); n > 0; n-- {
				m[str()] = value(depth + 1)
			}
			return m
		}
	}
	var took, refused int
	for i := 0; i < 4000; i++ {
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprint("o", i)}}
		for n := r.IntN(5) + 1; n > 0; n-- {
			obj[str()] = value(0)
		}
		j, err := json.Marshal(obj)
		require.NoError(t, err)
		if !literal(j) {
			refused++
			continue
		}
		took++
		want := fluxWay(t, j)
		got, ok := decodeObject(j, true)
		require.True(t, ok)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("literal took %s\nbut Flux's way gives %v", j, want)
		}
	}
	// Both answers are common, else the draw tests nothing.
	require.Greater(t, took, 1000)
	require.Greater(t, refused, 200)
}
