package review

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fluxpack/fluxpack/lint"
)

// TextOptions shape WriteText.
type TextOptions struct {
	// Color marks additions green, removals red and changes yellow with
	// ANSI escapes, for a terminal.
	Color bool
}

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

type painter bool

func (p painter) paint(code, s string) string {
	if !p {
		return s
	}
	return code + s + ansiReset
}

func mark(a Action) string {
	switch a {
	case Added:
		return "+"
	case Removed:
		return "-"
	}
	return "~"
}

func (p painter) action(a Action, s string) string {
	switch a {
	case Added:
		return p.paint(ansiGreen, s)
	case Removed:
		return p.paint(ansiRed, s)
	}
	return p.paint(ansiYellow, s)
}

// WriteText prints the report for a person at a terminal: what was
// compared, then objects, races, bootstrap order and images, each
// section only when it has something to say.
func (r *Report) WriteText(w io.Writer, opts TextOptions) error {
	p := painter(opts.Color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s -> %s\n", p.paint(ansiBold, "cluster"), r.Entry, r.Base, r.Head)
	fmt.Fprintf(&b, "%s changed; %s\n", count(len(r.Files), "file"), r.renderedLine())
	if line, causes := r.Findings.coverage(); line != "" {
		b.WriteString(line + "\n")
		for _, c := range causes {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	if len(r.Unresolved) > 0 {
		fmt.Fprintf(&b, "variables of %s (not in the tree) are left as ${var} on both sides\n", strings.Join(r.Unresolved, ", "))
	}
	if len(r.Outputs) > 0 {
		fmt.Fprintf(&b, "%s\n", r.outputsLine())
	}
	if !r.Changed() {
		b.WriteString(r.noChangeLine() + "\n")
	}
	if len(r.Objects) > 0 {
		fmt.Fprintf(&b, "\n%s: %s\n", p.paint(ansiBold, "objects"), objectCounts(r.Objects))
		for _, c := range r.Objects {
			fmt.Fprintf(&b, "%s %s  (%s)\n", p.action(c.Action, mark(c.Action)), c.title(), producerNote(c))
			for _, f := range c.Fields {
				writeField(&b, p, f)
			}
		}
	}
	r.writeFindings(&b, p)
	r.writeBootstrap(&b, p)
	if len(r.Images) > 0 {
		fmt.Fprintf(&b, "\n%s: %s\n", p.paint(ansiBold, "images"), imagesCount(r.Images))
		for _, im := range r.Images {
			fmt.Fprintf(&b, "  %s\n", imageLine(im))
		}
	}
	if len(r.NotRendered) > 0 {
		fmt.Fprintf(&b, "\n%s (their objects are left out on both sides):\n", p.paint(ansiBold, "not rendered"))
		for _, g := range groupNotRendered(r.NotRendered) {
			fmt.Fprintf(&b, "  %s\n", g)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteObjectChanges prints object changes as WriteText's objects
// section does, for a comparison that is not a Report (a folder against
// the artifact a tag holds).
func WriteObjectChanges(w io.Writer, cs []ObjectChange, opts TextOptions) error {
	p := painter(opts.Color)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", p.paint(ansiBold, "objects"), objectCounts(cs))
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s  (%s)\n", p.action(c.Action, mark(c.Action)), c.title(), producerNote(c))
		for _, f := range c.Fields {
			writeField(&b, p, f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// outputsLine says which outputs files both sides read from the working
// tree.
func (r *Report) outputsLine() string {
	return fmt.Sprintf("outputs read from %s on both sides (not in the repository)", strings.Join(r.Outputs, ", "))
}

// noChangeLine says there is no change, and how much that covers.
func (r *Report) noChangeLine() string {
	s := "no change to objects, races or bootstrap order"
	if len(r.NotRendered) > 0 {
		s += fmt.Sprintf(" among what rendered; %d of %d producers tried did not render on a side (listed below): their objects are not compared",
			len(r.NotRendered), len(r.NotRendered)+len(r.Rendered))
	}
	if f := r.Findings; f.Checked < f.Layers {
		s += fmt.Sprintf("; races in %d of %d layers not checked", f.Layers-f.Checked, f.Layers)
	}
	return s
}

// renderedLine counts the producers: rendered, not rendered (each with
// why, below) and skipped, which add up to every producer.
func (r *Report) renderedLine() string {
	if r.Unread {
		return "no layer reads what changed: nothing rendered (--all renders every producer)"
	}
	s := count(len(r.Rendered), "producer") + " rendered"
	if r.All {
		s += " (all)"
	}
	if n := len(r.NotRendered); n > 0 {
		s += fmt.Sprintf(", %d not rendered (listed below)", n)
	}
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped (no changed file feeds them; --all renders every one)", r.Skipped)
	}
	return s
}

// count is n and the noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// coverage says in how many layers races were checked and, for each
// cause lint gives, how many were not, what it could not read (the first
// three) and how to have them checked.
func (f FindingsDiff) coverage() (line string, causes []string) {
	if f.Layers == 0 {
		return "", nil
	}
	if f.Checked >= f.Layers {
		if f.Layers == 1 {
			return "races checked in the one layer", nil
		}
		return fmt.Sprintf("races checked in all %d layers", f.Layers), nil
	}
	line = fmt.Sprintf("races checked in %d of %d layers; %d not checked (a race there is not reported)", f.Checked, f.Layers, f.Layers-f.Checked)
	for _, c := range f.Coverage {
		why := map[string]string{
			lint.CoverageSource: "behind a source not read",
			lint.CoverageChart:  "with or after a chart not rendered",
			lint.CoverageRemote: "behind a remote resource not fetched",
		}[c.Cause]
		if why == "" {
			why = c.Cause
		}
		s := count(len(c.Layers), "layer") + " " + why
		if len(c.Missing) > 0 {
			m := c.Missing
			if len(m) > 3 {
				m = append(slices.Clone(m[:3]), fmt.Sprintf("%d more", len(c.Missing)-3))
			}
			s += " (" + strings.Join(m, "; ") + ")"
		}
		if c.Advice != "" {
			s += ": " + c.Advice
		}
		causes = append(causes, s)
	}
	return line, causes
}

func (r *Report) writeFindings(b *strings.Builder, p painter) {
	f := r.Findings
	if len(f.Introduced)+len(f.Fixed) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s: %d introduced, %d fixed\n", p.paint(ansiBold, f.Heading()), len(f.Introduced), len(f.Fixed))
	for _, x := range f.Introduced {
		fmt.Fprintf(b, "%s %s\n", p.paint(ansiRed, "+"), findingLine(x))
		for _, pl := range placeLines(x) {
			fmt.Fprintf(b, "    %s\n", pl)
		}
	}
	for _, x := range f.Fixed {
		fmt.Fprintf(b, "%s %s\n", p.paint(ansiGreen, "-"), findingLine(x))
		for _, pl := range placeLines(x) {
			fmt.Fprintf(b, "    %s\n", pl)
		}
	}
}

// placeLines are the places of a finding found at more than one, one a
// line, without the object when the finding names it.
func placeLines(f lint.Finding) []string {
	var out []string
	for _, p := range f.Places {
		if f.Object != "" {
			p.Object = ""
		}
		out = append(out, p.String())
	}
	return out
}

func findingLine(f lint.Finding) string {
	s := "[" + string(f.Rule) + "] "
	if f.File != "" {
		s += f.File
		if f.Line > 0 {
			s += fmt.Sprintf(":%d", f.Line)
		}
		s += ": "
	}
	if f.Layer != "" {
		s += "layer " + f.Layer + ": "
	}
	if f.Object != "" {
		s += f.Object + ": "
	}
	s += f.Marked()
	if len(f.Places) > 1 {
		s += fmt.Sprintf(" (%d places)", len(f.Places))
	}
	return s
}

func (r *Report) writeBootstrap(b *strings.Builder, p painter) {
	bs := r.Bootstrap
	if !bs.Changed() {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", p.paint(ansiBold, "bootstrap order"))
	for _, l := range bs.LayersAdded {
		fmt.Fprintf(b, "  %s layer %s\n", p.paint(ansiGreen, "+"), l)
	}
	for _, l := range bs.LayersRemoved {
		fmt.Fprintf(b, "  %s layer %s\n", p.paint(ansiRed, "-"), l)
	}
	for _, e := range bs.EdgesAdded {
		fmt.Fprintf(b, "  %s dependsOn %s\n", p.paint(ansiGreen, "+"), e)
	}
	for _, e := range bs.EdgesRemoved {
		fmt.Fprintf(b, "  %s dependsOn %s\n", p.paint(ansiRed, "-"), e)
	}
	if s := bs.Summary(); s != "" {
		fmt.Fprintf(b, "  %s\n", s)
	}
}

func objectCounts(cs []ObjectChange) string {
	n := map[Action]int{}
	for _, c := range cs {
		n[c.Action]++
	}
	return fmt.Sprintf("%d added, %d changed, %d removed", n[Added], n[Changed], n[Removed])
}

// title is the object's ID, and the name it had when a generator's hash
// renamed it: "ConfigMap/apps/values-5fbk9c7h2m (was values-2k8mh6tgd4)".
func (c ObjectChange) title() string {
	if c.BaseID == nil || *c.BaseID == c.ID {
		return c.ID.String()
	}
	return c.ID.String() + " (was " + c.BaseID.Name + ")"
}

// baseID is the object's ID before the change.
func (c ObjectChange) baseID() ObjectID {
	if c.BaseID != nil {
		return *c.BaseID
	}
	return c.ID
}

func producerNote(c ObjectChange) string {
	if c.BaseProducer != "" {
		return c.BaseProducer + " -> " + c.Producer
	}
	return c.Producer
}

// writeField prints one field change, a multi-line string changed as
// the lines that differ (a unified diff of the two values, two lines of
// context), not cut to its first 120 characters, where the change may
// not be.
func writeField(b *strings.Builder, p painter, f FieldChange) {
	if lines := lineDiff(f); lines != nil {
		fmt.Fprintf(b, "    %s:\n", f.Path)
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "+"):
				l = p.paint(ansiGreen, l)
			case strings.HasPrefix(l, "-"):
				l = p.paint(ansiRed, l)
			}
			fmt.Fprintf(b, "      %s\n", l)
		}
		return
	}
	fmt.Fprintf(b, "    %s\n", fieldLine(f))
}

// lineDiff returns the unified diff of a string field changed where
// either side has several lines, or nil.
func lineDiff(f FieldChange) []string {
	if f.Hidden || f.Op != FieldChanged {
		return nil
	}
	before, ok := f.Before.(string)
	after, ok2 := f.After.(string)
	if !ok || !ok2 || !strings.Contains(strings.TrimSuffix(before, "\n"), "\n") && !strings.Contains(strings.TrimSuffix(after, "\n"), "\n") {
		return nil
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: splitLines(before), B: splitLines(after), Context: 2})
	if err != nil || d == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(d, "\n"), "\n")
}

// splitLines splits s after each newline, a last line without one
// given one (difflib.SplitLines adds an empty line after a final
// newline).
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

func fieldLine(f FieldChange) string {
	switch {
	case f.Hidden:
		return fmt.Sprintf("%s: %s (value hidden)", f.Path, f.Op)
	case f.Op == FieldAdded:
		return fmt.Sprintf("%s: + %s", f.Path, short(f.After))
	case f.Op == FieldRemoved:
		return fmt.Sprintf("%s: - %s", f.Path, short(f.Before))
	case f.Op == FieldMoved:
		return fmt.Sprintf("%s: order %s -> %s", f.Path, short(f.Before), short(f.After))
	}
	return fmt.Sprintf("%s: %s -> %s", f.Path, short(f.Before), short(f.After))
}

// short prints a value on one line, cut at 120 characters.
func short(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
		if strings.ContainsAny(s, "\n\"") || s == "" {
			b, _ := json.Marshal(s)
			s = string(b)
		}
	case nil:
		s = "null"
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	return cut(s, 120)
}

// cut shortens s to n bytes or fewer, "..." marking the cut, never
// inside a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

func imageLine(im ImageChange) string {
	users := strings.Join(im.Objects, ", ")
	if im.FromValues {
		users += "; from values, chart not rendered"
	}
	switch im.Op {
	case "added":
		return fmt.Sprintf("+ %s (%s)", strings.Join(im.After, ", "), users)
	case "removed":
		return fmt.Sprintf("- %s (%s)", strings.Join(im.Before, ", "), users)
	}
	return fmt.Sprintf("~ %s -> %s (%s)", strings.Join(im.Before, ", "), strings.Join(im.After, ", "), users)
}

// imagesCount says how many images changed, and how many of those were
// read from values.
func imagesCount(ims []ImageChange) string {
	n := 0
	for _, im := range ims {
		if im.FromValues {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("%d changed", len(ims))
	}
	return fmt.Sprintf("%d changed (%d from values, chart not rendered)", len(ims), n)
}

// groupNotRendered prints the producers that did not render, those whose
// charts are not available offline together (a repository's HelmReleases
// of public charts are many, and one flag makes them renderable).
func groupNotRendered(nrs []NotRendered) []string {
	var out, charts []string
	type applier struct {
		k, side string
		unread  bool
	}
	applied := map[applier][]string{} // the layers a Kustomization that did not build, or was not read, applies (parentFailed)
	var appliers []applier
	for _, n := range nrs {
		if k, unread, ok := appliedByFailed(n.Reason); ok {
			a := applier{k, n.Side, unread}
			if applied[a] == nil {
				appliers = append(appliers, a)
			}
			applied[a] = append(applied[a], n.Producer)
			continue
		}
		if strings.Contains(n.Reason, "chart not available offline") {
			if n.Side != "both" {
				charts = append(charts, n.Producer+" ("+n.Side+")")
			} else {
				charts = append(charts, n.Producer)
			}
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", n.Producer, n.Side, n.Reason))
	}
	for _, a := range appliers {
		ps := applied[a]
		if len(ps) == 1 {
			out = append(out, fmt.Sprintf("%s (%s): %s", ps[0], a.side, parentFailed(a.k, a.unread)))
			continue
		}
		what := "Kustomizations"
		if slices.ContainsFunc(ps, func(p string) bool { return !strings.HasPrefix(p, "Kustomization/") }) {
			what = "producers"
		}
		why := "it did not build or render there, so Flux applies and prunes nothing of it; they stay as the cluster has them, and what they apply from this revision is not shown"
		if a.unread {
			why = "it is not read offline there, so what they are there is not known"
		}
		out = append(out, fmt.Sprintf("%d %s that %s applies (%s): %s: %s", len(ps), what, a.k, a.side, why, strings.Join(ps, ", ")))
	}
	if len(charts) > 0 {
		out = append(out, fmt.Sprintf("%d HelmReleases whose charts are not available offline (give --charts DIR, or --charts online): %s", len(charts), strings.Join(charts, ", ")))
	}
	return out
}
