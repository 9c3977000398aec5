package substitute

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// VarNamePattern is the rule kustomize-controller applies to every
// variable name.
const VarNamePattern = `^[_[:alpha:]][_[:alpha:][:digit:]]*$`

var varNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(VarNamePattern) })

// ValidVarName reports whether Flux accepts name as a postBuild variable
// name: ^[_[:alpha:]][_[:alpha:][:digit:]]*$ (ASCII letters only).
func ValidVarName(name string) bool { return varNameRE().MatchString(name) }

// VarName maps an output name to a valid Flux variable name by the one rule
// of this package: every byte that is not an ASCII letter, digit or "_"
// becomes "_" (a multi-byte character gives one "_"), and a name that then
// starts with a digit gets a leading "_". So "vpc-id" is "vpc_id",
// "1st_subnet" is "_1st_subnet" and "db.host" is "db_host". Valid names are
// returned unchanged. The empty name stays empty (and is an error).
func VarName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
