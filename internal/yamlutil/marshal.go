package yamlutil

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	sigyaml "sigs.k8s.io/yaml"
)

// JSONToYAML is sigs.k8s.io/yaml's JSONToYAML, byte for byte, without
// parsing the JSON as YAML: JSONToYAML reads JSON with yaml.v2's scanner,
// whose token queue made it the largest cost of fluxpack's rendering. This decodes the
// JSON with encoding/json into the values yaml.v2 would have made
// (map[interface{}]interface{}, []interface{}, strings, and numbers
// resolved by yaml.v2's own rules) and has yaml.v2 encode them as
// JSONToYAML does. Input it is not sure of (characters yaml.v2 refuses,
// deep nesting, anything but one JSON value) goes to JSONToYAML itself, so
// errors are JSONToYAML's too. FuzzJSONToYAML holds the two together.
//
// A note for the library: sigs.k8s.io/yaml could do this itself.
func JSONToYAML(j []byte) ([]byte, error) {
	v, ok := yamlValues(j)
	if !ok {
		return sigyaml.JSONToYAML(j)
	}
	return yamlv2.Marshal(v)
}

// Marshal is sigs.k8s.io/yaml's Marshal on JSONToYAML.
func Marshal(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return JSONToYAML(j)
}

// MaxDepth is where yamlValues hands over to sigs.k8s.io/yaml's JSONToYAML
// (yaml.v2 and encoding/json both limit nesting; objects are nowhere near
// it).
const MaxDepth = 100

// yamlValues decodes j into what yaml.v2 makes of it, or says it is not
// sure.
func yamlValues(j []byte) (any, bool) {
	if !Readable(j) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // more than one value
	}
	return toYAMLValue(v, 0)
}

// yamlNumber is what yaml.v2 makes of a JSON number: a JSON integer that
// fits int64 is an int (on 64-bit machines); anything else yaml.v2
// resolves itself, as the plain scalar it is in the JSON text.
func yamlNumber(n json.Number) (any, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && int64(int(i)) == i {
		return int(i), true
	}
	var x any
	if err := yamlv2.Unmarshal([]byte(n), &x); err != nil {
		return nil, false
	}
	return x, true
}

// Readable reports whether yaml.v2 reads j's characters as
// encoding/json does. It takes only what json.Marshal can write: no tab,
// line break or control character (YAML reads those otherwise; DEL and C1
// controls, which json.Marshal leaves in strings, it refuses), no NEL, LS
// or PS (yaml.v2 folds them in a string), no escape json.Marshal does not
// write ("\/", a surrogate in \u); otherwise printable ASCII and the
// printable ranges #xA0-#xD7FF, #xE000-#xFFFD and #x10000-#x10FFFF.
func Readable(j []byte) bool {
	for i := 0; i < len(j); {
		c := j[i]
		if c == '\\' && i+1 < len(j) {
			// An escape: only those json.Marshal writes, which yaml.v2
			// reads alike (not "\/", and no surrogate in \u: json.Marshal
			// writes UTF-8).
			switch j[i+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
			case 'u':
				if i+6 > len(j) {
					return false
				}
				r, err := strconv.ParseUint(string(j[i+2:i+6]), 16, 32)
				if err != nil || r >= 0xd800 && r <= 0xdfff {
					return false
				}
			default:
				return false
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			if c < 0x20 || c > 0x7e { // no tab, line break or control: json.Marshal writes none
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(j[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r == 0x85, r == 0x2028, r == 0x2029:
			return false // line breaks to yaml.v2, which folds them
		case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		default:
			return false
		}
		i += size
	}
	return true
}

// ObjectYAML is sigs.k8s.io/yaml's Marshal(obj) for an object decodeObject
// made (or yaml.v3 decoded into a map), without the JSON in between: it
// builds the values yaml.v2 would read from json.Marshal(obj) and has
// yaml.v2 encode them. ok is false for anything it is not sure of; the
// caller then takes Marshal.
func ObjectYAML(obj map[string]any) ([]byte, bool) {
	v, ok := toYAMLValue(obj, 0)
	if !ok {
		return nil, false
	}
	data, err := yamlv2.Marshal(v)
	return data, err == nil
}

// toYAMLValue turns v into the values yaml.v2 makes of json.Marshal(v)
// (for yamlValues, v is what encoding/json decoded: numbers as
// json.Number). A number is resolved from the text json.Marshal gives it.
// ok is false for what it is not sure of: a string with characters
// yaml.v2 reads otherwise than JSON, a merge key, a value of another type.
func toYAMLValue(v any, depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return nil, true // json.Marshal writes null
		}
		m := make(map[interface{}]interface{}, len(v))
		for k, e := range v {
			if k == "<<" || !plainString(k) {
				return nil, false // "<<" is YAML's merge key: leave it to yaml.v2
			}
			x, ok := toYAMLValue(e, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = x
		}
		return m, true
	case []any:
		if v == nil {
			return nil, true
		}
		s := make([]interface{}, len(v))
		for i, e := range v {
			x, ok := toYAMLValue(e, depth+1)
			if !ok {
				return nil, false
			}
			s[i] = x
		}
		return s, true
	case string:
		return v, plainString(v)
	case json.Number:
		return yamlNumber(v)
	case int64:
		if int64(int(v)) != v {
			return nil, false
		}
		return int(v), true
	case int: // from yaml.v3, as uint64
		return v, true
	case uint64:
		return yamlNumber(json.Number(strconv.FormatUint(v, 10)))
	case float64:
		t, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		return yamlNumber(json.Number(t))
	case bool, nil:
		return v, true
	default:
		return nil, false
	}
}

// plainString reports whether s reaches yaml.v2 unchanged through
// json.Marshal: valid UTF-8 without the characters Readable refuses
// that json.Marshal leaves as they are (DEL, C1 controls and NEL,
// U+FFFE and U+FFFF; it escapes the others).
func plainString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff {
			return false
		}
		i += size
	}
	return true
}
