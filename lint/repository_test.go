package lint_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// Every kind of a repository's Notes is a lint rule: Repository reports
// each Note as a finding of that rule.
func TestNoteKindsAreRules(t *testing.T) {
	for _, k := range fluxrepo.NoteKinds() {
		assert.Contains(t, lint.Rules(), lint.Rule(k), "fluxrepo.NoteKind %q", k)
	}
}
