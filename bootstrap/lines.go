package bootstrap

import (
	"regexp"
	"strings"
	"sync"
)

// maxQuotedLines bounds how many lines a quote may hold a command line
// open for: a stray apostrophe (a word such as don't in an echo) must not
// swallow the commands after it.
const maxQuotedLines = 64

// commandLines splits a script's text into command lines as a shell reads
// them: a backslash at the end of a line continues it, and so does a line
// break inside quotes (python3 -c '…' over several lines), when the quote
// closes within maxQuotedLines lines; a here-document's lines are lines
// of their own, whatever quotes they hold.
func commandLines(text string) []string {
	text = strings.ReplaceAll(text, "\\\r\n", " ")
	text = strings.ReplaceAll(text, "\\\n", " ")
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if q := openQuote(line, 0); q != 0 {
			// Joined up to the line the quote closes on, if it does.
			for j := i + 1; j < len(lines) && j <= i+maxQuotedLines; j++ {
				if q = openQuote(lines[j], q); q == 0 {
					line = strings.Join(lines[i:j+1], "\n")
					i = j
					break
				}
			}
		}
		out = append(out, line)
		if word := hereDoc(line); word != "" {
			for i+1 < len(lines) {
				i++
				out = append(out, lines[i])
				if strings.TrimSpace(lines[i]) == word {
					break
				}
			}
		}
	}
	return out
}

// openQuote returns the quote (' or ") left open at the end of line when
// q is open at its start (0: none), as splitCommands reads quotes: a
// backslash escapes outside single quotes, an unquoted # at the start of
// a word starts a comment.
func openQuote(line string, q byte) byte {
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else if c == '\\' && q == '"' {
				i++
			}
		case c == '\'' || c == '"':
			q, inWord = c, true
		case c == '\\':
			i++
			inWord = true
		case strings.IndexByte(" \t\r;|&()", c) >= 0:
			inWord = false
		case c == '#' && !inWord:
			return 0
		default:
			inWord = true
		}
	}
	return q
}

// hereDoc returns the word that ends a here-document a command line
// starts (<<EOF, <<-'EOF', << "EOF"), or "".
func hereDoc(line string) string {
	line = strings.ReplaceAll(line, "<<<", "   ") // a here-string
	m := hereDocStart().FindStringSubmatchIndex(line)
	if m == nil || openQuote(line[:m[0]], 0) != 0 {
		return ""
	}
	return line[m[2]:m[3]]
}

var hereDocStart = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
})
