package bootstrap

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// This file expands what shell scripts name files through: a folder
// variable set from git (ROOT_DIR="$(git rev-parse --show-toplevel)"),
// and a loop over an array (for f in "${files[@]}"; do kubectl apply
// --filename "${f}"; done), as the bootstrap scripts of onedr0p's
// cluster-template do. Nothing runs: what cannot be read so stays a
// variable, and is not guessed.

var (
	gitTopRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*(?:export\s+|readonly\s+|local\s+(?:-r\s+)?|declare\s+(?:-[a-zA-Z]+\s+)?)?([A-Za-z_]\w*)="?\$\(\s*git\s+rev-parse\s+--show-toplevel\s*\)"?\s*$`)
	})
	arrayRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*(?:readonly\s+|local\s+(?:-[a-zA-Z]+\s+)?|declare\s+(?:-[a-zA-Z]+\s+)?)?([A-Za-z_]\w*)=\(([^()]*)\)`)
	})
	forRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^(\s*)for\s+([A-Za-z_]\w*)\s+in\s+"?\$\{([A-Za-z_]\w*)\[@\]\}"?\s*;?\s*(?:\n\s*)?do\b`)
	})
	doneRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*done\b`) })
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

// withVar replaces $name and ${name} in text with value.
func withVar(text, name, value string) string {
	text = strings.ReplaceAll(text, "${"+name+"}", value)
	return regexp.MustCompile(`\$`+regexp.QuoteMeta(name)+`\b`).ReplaceAllLiteralString(text, value)
}

// expandLoops writes out each loop of text over an array the text sets,
// once for each of its elements (the array's words, their quotes
// removed), with the loop's variable replaced by it. A loop over anything
// else, or over an element that holds a command substitution or a glob,
// stays as it is.
func expandLoops(text string) string {
	arrays := map[string][]string{}
	for _, m := range arrayRE().FindAllStringSubmatch(text, -1) {
		var elems []string
		for _, words := range splitCommands(strings.ReplaceAll(m[2], "\n", " ")) {
			for _, cmd := range words {
				elems = append(elems, cmd...)
			}
		}
		if !slices.ContainsFunc(elems, func(e string) bool { return strings.ContainsAny(e, "*?[`") || strings.Contains(e, "$(") }) {
			arrays[m[1]] = elems
		}
	}
	if len(arrays) == 0 {
		return text
	}
	var b strings.Builder
	for {
		loc := forRE().FindStringSubmatchIndex(text)
		if loc == nil {
			break
		}
		elems, known := arrays[text[loc[6]:loc[7]]]
		end := doneRE().FindStringIndex(text[loc[1]:])
		if !known || end == nil {
			b.WriteString(text[:loc[1]])
			text = text[loc[1]:]
			continue
		}
		body := text[loc[1] : loc[1]+end[0]]
		variable := text[loc[4]:loc[5]]
		b.WriteString(text[:loc[0]])
		for _, e := range elems {
			b.WriteString(withVar(body, variable, e))
			b.WriteString("\n")
		}
		text = text[loc[1]+end[1]:]
	}
	b.WriteString(text)
	return b.String()
}

var positionalRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*(?:export\s+|readonly\s+|local\s+(?:-r\s+)?|declare\s+(?:-[a-zA-Z]+\s+)?)?([A-Za-z_]\w*)="?\$\{?[1-9][}:]`)
})

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
