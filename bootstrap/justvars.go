package bootstrap

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// isJustfile reports whether a script's file name is a justfile's or a
// just module's.
func isJustfile(name string) bool {
	switch strings.ToLower(name) {
	case "justfile", ".justfile":
		return true
	}
	return strings.HasSuffix(name, ".just")
}

// justVars writes out the variables a justfile (or module: here is its
// folder, root the repository's, where the root justfile is) sets and
// its recipes use as {{ NAME }}: those made of string literals, the
// directory functions (justfile_dir(): the root justfile's folder;
// source_dir(), module_dir(): the file's) and variables set before, with
// + and just's / (a path join). One set from a command (`…`), the
// environment or another function is left as it is.
func justVars(text, root, here string) string {
	vars := map[string]string{}
	for _, m := range justAssignment().FindAllStringSubmatch(text, -1) {
		if v, ok := justValue(m[2], root, here, vars); ok {
			vars[m[1]] = v
		}
	}
	if len(vars) == 0 {
		return text
	}
	return justUse().ReplaceAllStringFunc(text, func(s string) string {
		name := strings.TrimSpace(s[2 : len(s)-2])
		if v, ok := vars[name]; ok {
			return v
		}
		return s
	})
}

// justValue evaluates the expression of an assignment, if it is made of
// what justVars writes out.
func justValue(expr, root, here string, vars map[string]string) (string, bool) {
	var out string
	join := byte('+')
	for expr = strings.TrimSpace(expr); ; {
		var term string
		switch {
		case expr == "":
			return "", false
		case expr[0] == '\'' || expr[0] == '"':
			end := strings.IndexByte(expr[1:], expr[0])
			if end < 0 || expr[0] == '"' && strings.Contains(expr[1:end+1], `\`) {
				return "", false
			}
			term, expr = expr[1:end+1], expr[end+2:]
		default:
			m := justTerm().FindString(expr)
			if m == "" {
				return "", false
			}
			expr = expr[len(m):]
			switch name := strings.TrimSpace(m); name {
			case "justfile_dir()", "justfile_directory()":
				term = root
			case "source_dir()", "source_directory()", "module_dir()", "module_directory()":
				term = here
			default:
				v, ok := vars[name]
				if !ok {
					return "", false
				}
				term = v
			}
		}
		if join == '/' {
			out = path.Join(out, term)
		} else {
			out += term
		}
		expr = strings.TrimSpace(expr)
		if expr == "" {
			return out, true
		}
		if expr[0] != '+' && expr[0] != '/' {
			return "", false
		}
		join, expr = expr[0], strings.TrimSpace(expr[1:])
	}
}

var (
	justAssignment = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^(?:export\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*:=\s*(.+?)\s*$`)
	})
	justTerm = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(?:\(\))?`)
	})
	justUse = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\{\{\s*[A-Za-z_][A-Za-z0-9_-]*\s*\}\}`)
	})
)
