package review_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// A path that no longer builds is no race: the report says "other
// problems" beside the races, and counts them apart.
func TestFindingsRacesAndOtherProblems(t *testing.T) {
	race := lint.Finding{Rule: lint.RuleWebhookOrder, Severity: lint.SeverityError, Layer: "crs", Message: "races the webhook"}
	path := lint.Finding{Rule: lint.RulePath, Severity: lint.SeverityError, Layer: "apps", Message: "lstat apps/x.yaml: no such file or directory"}
	onlyRaces := review.FindingsDiff{Introduced: []lint.Finding{race}}
	assert.Equal(t, "races", onlyRaces.Heading())
	both := review.FindingsDiff{Introduced: []lint.Finding{race, path}}
	assert.Equal(t, "races and other problems", both.Heading())
	races, others := review.Tally(both.Introduced)
	assert.Equal(t, [2]int{1, 1}, [2]int{races, others})

	r := &review.Report{Entry: "clusters/prod", Base: "HEAD~1", Head: "HEAD", Findings: review.FindingsDiff{Introduced: []lint.Finding{path}}}
	var text strings.Builder
	require.NoError(t, r.WriteText(&text, review.TextOptions{}))
	assert.Contains(t, text.String(), "races and other problems: 1 introduced, 0 fixed")
	var md bytes.Buffer
	require.NoError(t, review.WriteMarkdown(&md, []*review.Report{r}, review.MarkdownOptions{}))
	assert.Contains(t, md.String(), "0 introduced, 0 fixed; other problems: 1 introduced, 0 fixed")
	assert.Contains(t, md.String(), "**Races and other problems**: 1 introduced, 0 fixed")
}
