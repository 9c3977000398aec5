package substitute

import (
	"strings"

	"github.com/fluxcd/pkg/envsubst"
)

// Applied returns s, an object's name or namespace as written, as Flux
// applies it under a postBuild whose inline substitute is vars. With all
// (the postBuild has no substituteFrom), vars are all its variables, and
// one not among them takes its default, as in Flux; otherwise every
// variable s uses must be one of vars, which win over substituteFrom's.
// Values lose their newlines, as kustomize-controller loads them. ok is
// false when s cannot be told so.
func Applied(s string, vars map[string]string, all bool) (string, bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	known := true
	out, err := envsubst.Eval(s, func(name string) (string, bool) {
		v, ok := vars[name]
		known = known && (ok || all)
		return strings.ReplaceAll(v, "\n", ""), ok
	})
	return out, err == nil && known
}
