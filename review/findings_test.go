package review_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/review"
)

// TestDiffFindingsByPlace: a finding of several places is matched place
// by place, so a place a change adds to a problem the base has already is
// introduced, and one it removes fixed, each as one finding.
func TestDiffFindingsByPlace(t *testing.T) {
	finding := func(places ...lint.Place) lint.Finding {
		return lint.Group(func() []lint.Finding {
			var out []lint.Finding
			for _, p := range places {
				out = append(out, lint.Finding{Rule: lint.RuleCRDOrder, Severity: lint.SeverityError, Layer: "configs", Object: p.Object, File: p.File, Line: p.Line, Message: "the CRD of Widget is in layer \"crds\""})
			}
			return out
		}())[0]
	}
	a := lint.Place{Object: "Widget/w/a", File: "w.yaml", Line: 1}
	b := lint.Place{Object: "Widget/w/b", File: "w.yaml", Line: 9}
	c := lint.Place{Object: "Widget/w/c", File: "w.yaml", Line: 17}
	d := review.DiffFindings(&lint.Report{Findings: []lint.Finding{finding(a, b)}}, &lint.Report{Findings: []lint.Finding{finding(b, c)}})
	assert.Equal(t, []lint.Finding{finding(c)}, d.Introduced, "DiffFindings: introduced")
	assert.Equal(t, []lint.Finding{finding(a)}, d.Fixed, "DiffFindings: fixed")

	d = review.DiffFindings(&lint.Report{Findings: []lint.Finding{finding(a)}}, &lint.Report{Findings: []lint.Finding{finding(a, b, c)}})
	assert.Equal(t, []lint.Finding{finding(b, c)}, d.Introduced, "DiffFindings: two places added are one finding")
	assert.Empty(t, d.Fixed, "DiffFindings: fixed")
}
