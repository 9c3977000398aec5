// Package suggest finds, for a name nothing has, the known name it is most
// likely a typo of: one implementation for every "did you mean" fluxpack
// prints (a dependsOn on an unknown layer, an unset variable, a health
// check on an object no layer applies). It does no I/O and knows no Flux.
package suggest

import (
	"path"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the known name closest to
// name, when one is close enough to be a typo: the same name in another
// namespace, the same letters in another case, or at most a third of its
// letters (at least one, at most three) away. Of names equally close, the
// first in known wins. It returns "" otherwise, and when known holds name.
func DidYouMean(name string, known []string) string {
	best, bestDist := "", 0
	limit := min(max(len(name)/3, 1), 3)
	for _, k := range known {
		if k == name {
			return ""
		}
		var d int
		switch {
		case strings.EqualFold(k, name), path.Base(k) == path.Base(name):
			d = 0
		default:
			d = editDistance(strings.ToLower(k), strings.ToLower(name))
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
