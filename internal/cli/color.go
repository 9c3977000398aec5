package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/fluxpack/fluxpack/lint"
)

// ANSI SGR sequences of lint's findings on a terminal.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[31m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
)

// isTerminal reports whether w is a terminal (not a pipe, a file or
// /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// useColor is fluxpack's one rule for colour, for every command that
// colours (lint's findings, diff's text report): w gets colour only when it
// is a terminal, $NO_COLOR is unset or empty (https://no-color.org: any
// other value turns colour off) and $TERM is not "dumb". There is no
// --color flag: a pipe or a file never gets colour.
func useColor(w io.Writer) bool {
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(w)
}

// findingLine is a finding of lint's text output: prefix ("cluster prod: "
// in a fleet's), then the finding; with colour, its file:line bold and its
// [rule] in the colour of its severity: error red, warning yellow, hint
// cyan. A finding of several places lists them under it, one a line.
func findingLine(prefix string, fd lint.Finding, color bool) string {
	s := headLine(fd, color)
	for _, p := range fd.Places {
		if fd.Object != "" {
			p.Object = "" // the finding names it
		}
		loc := p.String()
		if color && p.File != "" {
			at := p.File
			if p.Line > 0 {
				at += fmt.Sprintf(":%d", p.Line)
			}
			loc = sgrBold + at + sgrReset + strings.TrimPrefix(loc, at)
		}
		s += "  " + loc + "\n"
	}
	return prefix + s
}

// headLine is the first line of a finding in lint's text output.
func headLine(fd lint.Finding, color bool) string {
	s := fd.String()
	if !color {
		return s + "\n"
	}
	if fd.File != "" {
		loc := fd.File
		if fd.Line > 0 {
			loc += fmt.Sprintf(":%d", fd.Line)
		}
		if rest, ok := strings.CutPrefix(s, loc+": "); ok {
			s = sgrBold + loc + sgrReset + ": " + rest
		}
	}
	tag := "[" + string(fd.Rule) + "]"
	if body, ok := strings.CutSuffix(s, tag); ok {
		c := sgrRed
		switch fd.Severity {
		case lint.SeverityWarning:
			c = sgrYellow
		case lint.SeverityHint:
			c = sgrCyan
		}
		s = body + c + tag + sgrReset
	}
	return s + "\n"
}
