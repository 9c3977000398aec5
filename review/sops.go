package review

import (
	"regexp"
	"strings"
	"sync"
)

// sopsCiphertext matches a value SOPS encrypted:
// ENC[AES256_GCM,data:…,iv:…,tag:…,type:str]. It reaches a rendered
// object from a file SOPS encrypts (kustomize-controller decrypts it; a
// review cannot) or through postBuild substitution from such a file's
// Secret.
var sopsCiphertext = sync.OnceValue(func() *regexp.Regexp { // compiled on first use
	return regexp.MustCompile(`ENC\[[A-Za-z0-9_]+,data:[^\]]*\]`)
})

// The placeholders of a SOPS ciphertext in a report: a review has no key,
// so it says only whether the ciphertext is the other side's.
const (
	sopsShown   = "(sops-encrypted)"
	sopsChanged = "(sops-encrypted, changed)"
)

// hasSops reports whether a string of v holds a SOPS ciphertext.
func hasSops(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, "ENC[") && sopsCiphertext().MatchString(x)
	case map[string]any:
		for _, e := range x {
			if hasSops(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasSops(e) {
				return true
			}
		}
	}
	return false
}

// maskSops returns v with each SOPS ciphertext in its strings replaced by
// "(sops-encrypted)". With compare, other is the value at the same place
// on the other side, and a ciphertext it does not hold there (the n-th of
// the string) reads "(sops-encrypted, changed)". v is returned as is when
// it holds none.
func maskSops(v, other any, compare bool) any {
	if !hasSops(v) {
		return v
	}
	switch x := v.(type) {
	case string:
		var old []string
		if o, ok := other.(string); ok {
			old = sopsCiphertext().FindAllString(o, -1)
		}
		n := 0
		return sopsCiphertext().ReplaceAllStringFunc(x, func(tok string) string {
			i := n
			n++
			if compare && (i >= len(old) || old[i] != tok) {
				return sopsChanged
			}
			return sopsShown
		})
	case map[string]any:
		om, _ := other.(map[string]any)
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = maskSops(e, om[k], compare)
		}
		return c
	case []any:
		ol, _ := other.([]any)
		c := make([]any, len(x))
		for i, e := range x {
			var o any
			if i < len(ol) {
				o = ol[i]
			}
			c[i] = maskSops(e, o, compare)
		}
		return c
	}
	return v
}

// maskObject is maskSops for an object's value.
func maskObject(v, other map[string]any, compare bool) map[string]any {
	if v == nil {
		return nil
	}
	m, _ := maskSops(v, other, compare).(map[string]any)
	return m
}

// dropSopsMetadata removes the sops key a file SOPS encrypts carries (its
// MAC, recipients and date): kustomize-controller decrypts the file and
// applies the object without it, and it changes with every edit.
func dropSopsMetadata(v map[string]any) {
	m, ok := v["sops"].(map[string]any)
	if !ok {
		return
	}
	if _, mac := m["mac"]; mac {
		delete(v, "sops")
		return
	}
	if _, date := m["lastmodified"]; date {
		delete(v, "sops")
	}
}
