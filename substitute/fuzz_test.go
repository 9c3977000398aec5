package substitute_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzSubstituteVsFlux runs one variable value and one line of a manifest
// through Flux's own substitution (fluxcd/pkg/kustomize, as
// TestDifferentialAgainstFlux does) and through package substitute: both
// must fail, or both must give the same objects.
func FuzzSubstituteVsFlux(f *testing.F) {
	f.Add("0123", "k: ${v}", false)
	f.Add("a-b-c", "k: ${v//-/_}|${w:=d}", false)
	f.Add("x", "k: $${v} ${m}", true)
	f.Add("a: b", "k: '${v}'", false)
	f.Add("[a, b]", "k: ${v}", false)
	f.Add("yes", "${v}: x", false)
	f.Add("héllo\n", "k: ${v:1:2}", false)
	f.Fuzz(func(t *testing.T, value, line string, lax bool) {
		if strings.ContainsAny(line, "\n\r") || len(line) > 200 || len(value) > 200 {
			return // one line of the manifest; Flux's own edge cases are in diffCases
		}
		if !utf8.ValidString(value) || strings.ContainsFunc(value, func(r rune) bool { return !unicode.IsPrint(r) && r != '\n' && r != '\t' }) {
			return // not a value a Kustomization (YAML) can hold
		}
		q, err := json.Marshal(value)
		if err != nil {
			return
		}
		tc := diffCase{
			ks:   "substitute: {v: " + string(q) + ", w: fixed}",
			objs: cm + "  " + line + "\n",
			lax:  lax,
		}
		flux, fluxErr := runFlux(t, tc)
		ours, ourErr := runOurs(t, tc)
		switch {
		case (fluxErr == nil) != (ourErr == nil):
			t.Fatalf("v=%q, line %q, lax %t: Flux error %v, substitute error %v", value, line, lax, fluxErr, ourErr)
		case fluxErr == nil && flux != ours:
			t.Fatalf("v=%q, line %q, lax %t: Flux gives\n%s\nsubstitute gives\n%s", value, line, lax, flux, ours)
		}
	})
}
