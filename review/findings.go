package review

import (
	"cmp"
	"slices"

	"github.com/fluxpack/fluxpack/lint"
)

// FindingsDiff is what a change does to lint's findings.
type FindingsDiff struct {
	// Introduced are the head's findings the base does not have; Fixed the
	// base's the head does not have. Hints are left out of both.
	Introduced []lint.Finding `json:"introduced"`
	Fixed      []lint.Finding `json:"fixed"`
	// Coverage is the head's (lint.Report.Coverage): what lint could not
	// check on the head side, and so what a race there may hide.
	Coverage []lint.Coverage `json:"coverage,omitempty"`
	// Layers and Checked are the head's counts (lint.Report): the layers
	// lint read, and those it could check fully. A race in the others is
	// not reported: Coverage says why each was not checked.
	Layers  int `json:"layers"`
	Checked int `json:"checked"`
}

// DiffFindings matches the failing findings of two lint reports by rule,
// layer, object and message (never by file or line, which any edit above
// moves), then what is left by rule, layer and object alone (a finding
// whose message changed is the same finding), and returns the rest. A
// finding of several places is matched place by place, so a place the
// change adds to a problem is introduced; what is left is grouped again
// (lint.Group).
func DiffFindings(base, head *lint.Report) FindingsDiff {
	var d FindingsDiff
	if head != nil {
		d.Coverage, d.Layers, d.Checked = head.Coverage, head.Layers, head.Checked
	}
	fails := func(r *lint.Report) []lint.Finding {
		if r == nil {
			return nil
		}
		var out []lint.Finding
		for _, f := range r.Findings {
			if f.Fails() {
				out = append(out, f.Split()...)
			}
		}
		return out
	}
	b, h := fails(base), fails(head)
	bUsed := make([]bool, len(b))
	hUsed := make([]bool, len(h))
	match := func(same func(x, y lint.Finding) bool) {
		for i, x := range h {
			if hUsed[i] {
				continue
			}
			for j, y := range b {
				if !bUsed[j] && same(x, y) {
					hUsed[i], bUsed[j] = true, true
					break
				}
			}
		}
	}
	match(func(x, y lint.Finding) bool {
		return x.Rule == y.Rule && x.Layer == y.Layer && x.Object == y.Object && x.Message == y.Message
	})
	match(func(x, y lint.Finding) bool { return x.Rule == y.Rule && x.Layer == y.Layer && x.Object == y.Object })
	for i, f := range h {
		if !hUsed[i] {
			d.Introduced = append(d.Introduced, f)
		}
	}
	for j, f := range b {
		if !bUsed[j] {
			d.Fixed = append(d.Fixed, f)
		}
	}
	order := func(x, y lint.Finding) int {
		return cmp.Or(cmp.Compare(x.Rule, y.Rule), cmp.Compare(x.Layer, y.Layer), cmp.Compare(x.Object, y.Object), cmp.Compare(x.Message, y.Message))
	}
	d.Introduced, d.Fixed = lint.Group(d.Introduced), lint.Group(d.Fixed)
	slices.SortStableFunc(d.Introduced, order)
	slices.SortStableFunc(d.Fixed, order)
	return d
}

// Heading names what Introduced and Fixed hold: "races" when every one is
// a race (lint.Rule.Race), "races and other problems" when a path that no
// longer builds, say, is among them.
func (d FindingsDiff) Heading() string {
	for _, f := range slices.Concat(d.Introduced, d.Fixed) {
		if !f.Rule.Race() {
			return "races and other problems"
		}
	}
	return "races"
}

// Tally counts findings as races and other problems.
func Tally(fs []lint.Finding) (races, others int) {
	for _, f := range fs {
		if f.Rule.Race() {
			races++
		} else {
			others++
		}
	}
	return races, others
}
