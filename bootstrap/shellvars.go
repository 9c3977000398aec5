package bootstrap

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// This file expands what shell scripts name files through: a folder
// variable set from git (ROOT_DIR="$(git rev-parse --show-toplevel)"),
// and a loop over an array (for f in "${files[@]}"; do kubectl apply
// --filename "${f}"; done), as the bootstrap scripts of onedr0p's
// cluster-template do. Nothing runs: what cannot be read so stays a
// variable, and is not guessed.

// assignPrefix is what may come before a shell assignment on its line.
const assignPrefix = `(?m)^\s*(?:export\s+|readonly\s+|local\s+(?:-[a-zA-Z]+\s+)?|declare\s+(?:-[a-zA-Z]+\s+)?)?([A-Za-z_]\w*)=`

var (
	gitTopRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(assignPrefix + `"?\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)"?\s*$`)
	})
	arrayRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(assignPrefix + `\(([^()]*)\)`) })
	// positionalRE: a variable set from the script's argument (CLUSTER="${1:?}").
	positionalRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(assignPrefix + `"?\$\{?[1-9][}:]`) })
	forRE        = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^(\s*)for\s+([A-Za-z_]\w*)\s+in\s+"?\$\{([A-Za-z_]\w*)\[@\]\}"?\s*;?\s*(?:\n\s*)?do\b`)
	})
	doneRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*done\b`) })
	loopRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*(?:for|while|until)\b`) })
)

// gitTopVars returns the variables the scripts set to the repository's
// top folder.
func gitTopVars(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, m := range gitTopRE().FindAllStringSubmatch(t, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// withVar replaces $name and ${name} in text with value ($names is
// another variable).
func withVar(text, name, value string) string {
	text = strings.ReplaceAll(text, "${"+name+"}", value)
	var b strings.Builder
	for {
		i := strings.Index(text, "$"+name)
		if i < 0 {
			break
		}
		end := i + 1 + len(name)
		b.WriteString(text[:i])
		if end < len(text) && (text[end] == '_' || unicode.IsLetter(rune(text[end])) || unicode.IsDigit(rune(text[end]))) {
			b.WriteString(text[i:end])
		} else {
			b.WriteString(value)
		}
		text = text[end:]
	}
	b.WriteString(text)
	return b.String()
}

// expandLoops writes out each loop of text over an array the text sets
// before it (the nearest such assignment: functions reuse names), once for
// each of its elements (the array's words, their quotes removed), with the
// loop's variable replaced by it. A loop over anything else, over an
// element that holds a command substitution or a glob, or holding a loop
// itself, stays as it is.
func expandLoops(text string) string {
	type array struct {
		name  string
		at    int // where it is set
		elems []string
	}
	var arrays []array
	for _, m := range arrayRE().FindAllStringSubmatchIndex(text, -1) {
		var elems []string
		for _, words := range splitCommands(strings.ReplaceAll(text[m[4]:m[5]], "\n", " ")) {
			for _, cmd := range words {
				elems = append(elems, cmd...)
			}
		}
		if slices.ContainsFunc(elems, func(e string) bool { return strings.ContainsAny(e, "*?[`") || strings.Contains(e, "$(") }) {
			elems = nil // unknown: set, but not to what can be read
		}
		arrays = append(arrays, array{name: text[m[2]:m[3]], at: m[0], elems: elems})
	}
	if len(arrays) == 0 {
		return text
	}
	var b strings.Builder
	done := 0 // text[:done] is written
	for _, loc := range forRE().FindAllStringSubmatchIndex(text, -1) {
		if loc[0] < done {
			continue // inside a loop written out already
		}
		name, variable := text[loc[6]:loc[7]], text[loc[4]:loc[5]]
		var set *array
		for i := range arrays {
			if arrays[i].name == name && arrays[i].at < loc[0] {
				set = &arrays[i]
			}
		}
		end := doneRE().FindStringIndex(text[loc[1]:])
		if set == nil || set.elems == nil || end == nil {
			continue
		}
		body := text[loc[1] : loc[1]+end[0]]
		if loopRE().MatchString(body) {
			continue
		}
		b.WriteString(text[done:loc[0]])
		for _, e := range set.elems {
			b.WriteString(withVar(body, variable, e))
			b.WriteString("\n")
		}
		done = loc[1] + end[1]
	}
	b.WriteString(text[done:])
	return b.String()
}

// positionalVars returns the variables the scripts set from their
// arguments (CLUSTER="${1:?}"): a script run for one cluster of several.
func positionalVars(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, m := range positionalRE().FindAllStringSubmatch(t, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// forEntry returns p with each of vars (variables a script sets from its
// arguments) replaced by the folder of the entry point's path (relative
// to the repository) that makes it a path that exists, as a script run
// for the entry point's cluster reads it ("" when none does, or p holds
// another variable).
func forEntry(p string, vars, folders []string, exists func(string) bool) string {
	candidates := []string{p}
	for _, v := range vars {
		if !strings.Contains(p, "${"+v+"}") && !strings.Contains(p, "$"+v) {
			continue
		}
		var next []string
		for _, c := range candidates {
			for _, f := range folders {
				next = append(next, withVar(c, v, f))
			}
		}
		candidates = next
	}
	for _, c := range candidates {
		if !strings.ContainsAny(c, "${}") && exists(c) {
			return c
		}
	}
	return ""
}
