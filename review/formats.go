package review

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fluxpack/fluxpack/lint"
)

// Unified returns the unified diff of one object's YAML (Secret values
// hidden), as `diff -u` prints it, with a/ and b/ headers naming the
// producer and the object.
func (c ObjectChange) Unified() string {
	name := c.Producer + "/" + c.ID.String()
	from, to := "a/"+name, "b/"+name
	if c.BaseProducer != "" || c.BaseID != nil {
		from = "a/" + cmp.Or(c.BaseProducer, c.Producer) + "/" + c.baseID().String()
	}
	switch c.Action {
	case Added:
		from = "/dev/null"
	case Removed:
		to = "/dev/null"
	}
	s, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(c.Before), B: difflib.SplitLines(c.After),
		FromFile: from, ToFile: to, Context: 3,
	})
	return s
}

// WriteUnified prints every object change as a unified diff, for tools
// that read patches.
func (r *Report) WriteUnified(w io.Writer) error {
	for _, c := range r.Objects {
		if _, err := io.WriteString(w, c.Unified()); err != nil {
			return err
		}
	}
	return nil
}

// MarkdownOptions shape WriteMarkdown.
type MarkdownOptions struct {
	// Limit is the most characters to write (0: 60,000, under GitHub's
	// 65,536 for a comment). Object sections that do not fit are left
	// out, and the report says how many and how to see them.
	Limit int
	// Title heads the report (default "fluxpack diff").
	Title string
}

// WriteMarkdown prints the reports (one per cluster) for a pull-request
// comment: a summary table first, then per cluster its races, bootstrap
// order, images and one collapsible section per object.
func WriteMarkdown(w io.Writer, reports []*Report, opts MarkdownOptions) error {
	limit := opts.Limit
	if limit <= 0 {
		limit = 60000
	}
	title := opts.Title
	if title == "" {
		title = "fluxpack diff"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	b.WriteString("| cluster | objects | races | bootstrap | images |\n|---|---|---|---|---|\n")
	for _, r := range reports {
		bs := "unchanged"
		if r.Bootstrap.Changed() {
			bs = fmt.Sprintf("+%d/-%d edges, +%d/-%d layers", len(r.Bootstrap.EdgesAdded), len(r.Bootstrap.EdgesRemoved), len(r.Bootstrap.LayersAdded), len(r.Bootstrap.LayersRemoved))
		}
		races := fmt.Sprintf("%d introduced, %d fixed", len(r.Findings.Introduced), len(r.Findings.Fixed))
		ri, oi := Tally(r.Findings.Introduced)
		if rf, of := Tally(r.Findings.Fixed); oi+of > 0 {
			races = fmt.Sprintf("%d introduced, %d fixed; other problems: %d introduced, %d fixed", ri, rf, oi, of)
		}
		if f := r.Findings; f.Checked < f.Layers {
			races += fmt.Sprintf(" (%d of %d layers not checked)", f.Layers-f.Checked, f.Layers)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.Entry, objectCounts(r.Objects), races, bs, imagesCount(r.Images))
	}
	var sections []string
	for _, r := range reports {
		var h strings.Builder
		fmt.Fprintf(&h, "\n### `%s`\n\n%s -> %s: %s changed; %s.\n", r.Entry, mdEscape(r.Base), mdEscape(r.Head), count(len(r.Files), "file"), r.renderedLine())
		if line, causes := r.Findings.coverage(); line != "" {
			fmt.Fprintf(&h, "\n%s.\n", mdEscape(strings.ToUpper(line[:1])+line[1:]))
			if len(causes) > 0 {
				h.WriteString("\n")
			}
			for _, c := range causes {
				fmt.Fprintf(&h, "- %s\n", mdEscape(c))
			}
		}
		if len(r.Unresolved) > 0 {
			fmt.Fprintf(&h, "\nVariables of %s (not in the tree) are left as `${var}` on both sides.\n", mdEscape(strings.Join(r.Unresolved, ", ")))
		}
		if len(r.Outputs) > 0 {
			line := r.outputsLine()
			fmt.Fprintf(&h, "\n%s.\n", mdEscape(strings.ToUpper(line[:1])+line[1:]))
		}
		if !r.Changed() {
			h.WriteString("\n" + mdEscape(strings.ToUpper(r.noChangeLine()[:1])+r.noChangeLine()[1:]) + ".\n")
		}
		if f := r.Findings; len(f.Introduced)+len(f.Fixed) > 0 {
			heading := f.Heading()
			fmt.Fprintf(&h, "\n**%s**: %d introduced, %d fixed\n\n", strings.ToUpper(heading[:1])+heading[1:], len(f.Introduced), len(f.Fixed))
			for _, x := range f.Introduced {
				fmt.Fprintf(&h, "- :x: %s\n", mdEscape(findingLine(x)))
				for _, pl := range placeLines(x) {
					fmt.Fprintf(&h, "  - %s\n", mdEscape(pl))
				}
			}
			for _, x := range f.Fixed {
				fmt.Fprintf(&h, "- :white_check_mark: fixed: %s\n", mdEscape(findingLine(x)))
				for _, pl := range placeLines(x) {
					fmt.Fprintf(&h, "  - %s\n", mdEscape(pl))
				}
			}
		}
		if bs := r.Bootstrap; bs.Changed() {
			h.WriteString("\n**Bootstrap order**\n\n")
			for _, l := range bs.LayersAdded {
				fmt.Fprintf(&h, "- added layer `%s`\n", l)
			}
			for _, l := range bs.LayersRemoved {
				fmt.Fprintf(&h, "- removed layer `%s`\n", l)
			}
			for _, e := range bs.EdgesAdded {
				fmt.Fprintf(&h, "- added dependsOn `%s`\n", e)
			}
			for _, e := range bs.EdgesRemoved {
				fmt.Fprintf(&h, "- removed dependsOn `%s`\n", e)
			}
			if s := bs.Summary(); s != "" {
				fmt.Fprintf(&h, "- %s\n", mdEscape(s))
			}
		}
		if len(r.Images) > 0 {
			h.WriteString("\n**Images**\n\n")
			for _, im := range r.Images {
				fmt.Fprintf(&h, "- `%s`\n", imageLine(im))
			}
		}
		if len(r.NotRendered) > 0 {
			h.WriteString("\n**Not rendered** (objects left out on both sides)\n\n")
			for _, g := range groupNotRendered(r.NotRendered) {
				fmt.Fprintf(&h, "- %s\n", mdEscape(g))
			}
		}
		if len(r.Objects) > 0 {
			fmt.Fprintf(&h, "\n**Objects**: %s\n", objectCounts(r.Objects))
		}
		sections = append(sections, h.String())
		for _, c := range r.Objects {
			sections = append(sections, fmt.Sprintf("\n<details><summary>%s <code>%s</code> (%s)%s</summary>\n\n```diff\n%s```\n\n</details>\n",
				mark(c.Action), c.title(), mdEscape(producerNote(c)), summaryField(c), strings.ReplaceAll(c.Unified(), "```", "`\u200b``")))
		}
	}
	left := 0
	for _, s := range sections {
		if left > 0 || b.Len()+len(s) > limit-200 {
			left++ // and every section after it, so that what is shown reads in order
			continue
		}
		b.WriteString(s)
	}
	if left > 0 {
		fmt.Fprintf(&b, "\n_%d sections left out to fit a comment; run `fluxpack diff -o unified` for every object._\n", left)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryField is what a collapsed object section says of the change:
// its first changed field, and how many more there are.
func summaryField(c ObjectChange) string {
	if len(c.Fields) == 0 {
		return ""
	}
	f := c.Fields[0]
	line := fieldLine(f)
	if lineDiff(f) != nil {
		line = f.Path + ": " + countLines(f.Before.(string), f.After.(string))
	}
	s := ": <code>" + htmlEscape(cut(line, 100)) + "</code>"
	if n := len(c.Fields) - 1; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// countLines says how many lines a multi-line string's change adds and
// removes.
func countLines(before, after string) string {
	added, removed := 0, 0
	for _, l := range lineDiff(FieldChange{Op: FieldChanged, Before: before, After: after}) {
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return fmt.Sprintf("+%d -%d lines", added, removed)
}

// htmlEscape escapes text inside an HTML element of a comment.
func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "&#124;").Replace(s)
}

func mdEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", "\\|").Replace(s)
}

// WriteGitHub prints the report as GitHub Actions workflow commands: a
// group per section with the text report, and an error annotation on the
// file and line of every finding the change introduces.
func (r *Report) WriteGitHub(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "::group::fluxpack diff %s\n", ghEscape(r.Entry))
	var t strings.Builder
	if err := r.WriteText(&t, TextOptions{}); err != nil {
		return err
	}
	b.WriteString(t.String())
	b.WriteString("::endgroup::\n")
	for _, f := range r.Findings.Introduced {
		props := "title=" + ghProp("fluxpack "+string(f.Rule))
		if f.File != "" {
			props = "file=" + ghProp(f.File) + ",line=" + fmt.Sprint(max(f.Line, 1)) + "," + props
		}
		level := "error"
		if f.Severity == lint.SeverityWarning {
			level = "warning"
		}
		msg := findingLine(f)
		if pls := placeLines(f); len(pls) > 0 {
			msg += "\n" + strings.Join(pls, "\n")
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", level, props, ghEscape(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ghEscape escapes a workflow command's message.
func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProp escapes a workflow command's property value.
func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// WriteSARIF prints the findings the reports introduce as SARIF 2.1.0,
// for GitHub code scanning: one result per finding, located at its file
// and line, or at each of its places (lint.Finding.Places).
func WriteSARIF(w io.Writer, reports []*Report, version string) error {
	type region struct {
		StartLine int `json:"startLine"`
	}
	type artifact struct {
		URI string `json:"uri"`
	}
	type physical struct {
		ArtifactLocation artifact `json:"artifactLocation"`
		Region           *region  `json:"region,omitempty"`
	}
	type location struct {
		PhysicalLocation physical `json:"physicalLocation"`
	}
	type message struct {
		Text string `json:"text"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   message    `json:"message"`
		Locations []location `json:"locations,omitempty"`
	}
	type rule struct {
		ID               string  `json:"id"`
		ShortDescription message `json:"shortDescription"`
		HelpURI          string  `json:"helpUri,omitempty"`
	}
	results := []result{}
	rules := []rule{}
	seen := map[lint.Rule]bool{}
	for _, r := range reports {
		for _, f := range r.Findings.Introduced {
			if !seen[f.Rule] {
				seen[f.Rule] = true
				rules = append(rules, rule{ID: string(f.Rule), ShortDescription: message{Text: "fluxpack lint rule " + string(f.Rule)},
					HelpURI: "https://github.com/fluxpack/fluxpack/blob/main/docs/lint-rules.md#" + url.PathEscape(string(f.Rule))})
			}
			res := result{RuleID: string(f.Rule), Level: "error", Message: message{Text: findingLine(f)}}
			if f.Severity == lint.SeverityWarning {
				res.Level = "warning"
			}
			for _, p := range f.AllPlaces() {
				if p.File == "" {
					continue
				}
				loc := location{PhysicalLocation: physical{ArtifactLocation: artifact{URI: p.File}}}
				if p.Line > 0 {
					loc.PhysicalLocation.Region = &region{StartLine: p.Line}
				}
				res.Locations = append(res.Locations, loc)
			}
			results = append(results, res)
		}
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "fluxpack", "version": version, "informationUri": "https://github.com/fluxpack/fluxpack", "rules": rules}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
