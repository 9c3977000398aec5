package substitute

import (
	"encoding/json"
	"fmt"

	"github.com/fluxcd/pkg/envsubst"
	sigyaml "sigs.k8s.io/yaml"
)

// This file holds the YAML 1.1 retyping check: what a known value becomes
// once Flux substitutes it into the re-serialised object.

// checkRetyping substitutes the known values into the scalar value as Flux
// would (after re-serialising it) and reads it back with YAML 1.1. The
// finding it returns names the variable, not the file, line or object.
func checkRetyping(value, name string, avail Available) *Finding {
	lookup := func(name string) (string, bool) {
		v, _, ok := avail.has(name)
		return v, ok
	}
	want, err := envsubst.Eval(value, lookup)
	if err != nil {
		return nil
	}
	// How Flux re-serialises the string, then substitutes in the text.
	reser := reserialised.get(value, func(value string) parsed {
		b, err := sigyaml.Marshal(map[string]string{"k": value})
		return parsed{v: string(b), err: err}
	})
	if reser.err != nil {
		return nil
	}
	substituted, err := envsubst.Eval(reser.v.(string), lookup)
	if err != nil {
		return nil
	}
	f := &Finding{Var: name}
	got := readBack.get(substituted, func(text string) parsed {
		var m map[string]any
		err := sigyaml.Unmarshal([]byte(text), &m)
		return parsed{v: m["k"], err: err}
	})
	if got.err != nil {
		f.Severity = SeverityError
		f.Message = fmt.Sprintf("the value of ${%s} breaks the YAML once substituted unquoted (%s), so Flux fails the Kustomization; write ${quote}${%s}${quote} with substitute: {quote: '\"'}", name, short(got.err), name)
		return f
	}
	v := got.v
	if s, ok := v.(string); ok && s == want {
		return nil
	}
	if b, err := json.Marshal(v); err == nil && string(b) == want {
		return nil // "3" → 3, "true" → true: the text survives
	}
	f.Severity = SeverityWarning
	f.Message = fmt.Sprintf("YAML 1.1 reads the substituted value %q as %s; if a string is meant, write ${quote}${%s}${quote} with substitute: {quote: '\"'}", want, describeValue(v), name)
	return f
}

// The answers of the two YAML steps of checkRetyping, each a function of
// its text alone, kept for every check of the process: a platform's
// layers repeat their values (${APP}-volsync in each app's layer), and a
// review checks each layer on both of its sides. The steps cost tens of
// microseconds each (JSON and YAML 1.1, there and back), which hundreds
// of values made the most of linting some repositories.
var reserialised, readBack textMemo
