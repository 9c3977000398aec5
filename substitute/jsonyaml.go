package substitute

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// literal reports whether Flux's substitution reads j (an object's JSON,
// as json.Marshal writes it) back with the values it has, whatever the
// variables, so that no YAML need be made of it: envsubst changes nothing
// in a text without '$' (outside ${…} it reads only "$$"), and yaml.v2
// writes and reads back as they were the strings yamlutil.Readable takes,
// booleans, nulls and integers of at most 15 digits. Other numbers
// (fractions, exponents, -0, longer integers) take the whole way, where
// yaml.v2 and float64 decide what they become, and so does a "<<" key,
// which yaml.v2 reads as a merge. TestLiteral holds it to that way.
func literal(j []byte) bool {
	if bytes.IndexByte(j, '$') >= 0 || bytes.Contains(j, []byte(`"\u003c\u003c":`)) || bytes.Contains(j, []byte(`"<<":`)) || !yamlutil.Readable(j) {
		return false
	}
	inString := false
	for i := 0; i < len(j); i++ {
		c := j[i]
		switch {
		case inString:
			if c == '\\' {
				i++ // Readable took the escape
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			k := i
			if c == '-' {
				k++
			}
			e := k
			for e < len(j) && j[e] >= '0' && j[e] <= '9' {
				e++
			}
			if n := e - k; n == 0 || n > 15 || j[k] == '0' && (n > 1 || c == '-') {
				return false
			}
			if e < len(j) && (j[e] == '.' || j[e] == 'e' || j[e] == 'E') {
				return false
			}
			i = e - 1
		}
	}
	return !inString
}

// decodeObject decodes j as unstructured.UnmarshalJSON does: integers that
// fit become int64, other numbers float64. With readBack, every number
// first goes through float64 and back to JSON, as Flux's reading back of a
// substituted object does (kyaml's RNode.UnmarshalJSON decodes into a map:
// 9007199254740993 comes out as ...992). ok is false where those would
// fail (a number out of range) or j is not one JSON object.
func decodeObject(j []byte, readBack bool) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if _, ok := convertNumbers(m, readBack, 0); !ok {
		return nil, false
	}
	return m, true
}

// convertNumbers replaces the json.Numbers in v as decodeObject says.
func convertNumbers(v any, readBack bool, depth int) (any, bool) {
	if depth > yamlutil.MaxDepth {
		return nil, false
	}
	switch v := v.(type) {
	case json.Number:
		if readBack {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return nil, false
			}
			t, err := json.Marshal(f)
			if err != nil {
				return nil, false
			}
			v = json.Number(t)
		}
		if i, err := v.Int64(); err == nil {
			return i, true
		}
		f, err := v.Float64()
		return f, err == nil
	case map[string]any:
		for k, e := range v {
			x, ok := convertNumbers(e, readBack, depth+1)
			if !ok {
				return nil, false
			}
			v[k] = x
		}
	case []any:
		for i, e := range v {
			x, ok := convertNumbers(e, readBack, depth+1)
			if !ok {
				return nil, false
			}
			v[i] = x
		}
	}
	return v, true
}
