package substitute

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/memo"
)

// TestTextMemoIsBounded: a memo keeps at most memo.DefaultMax answers, and
// answers every text still.
func TestTextMemoIsBounded(t *testing.T) {
	var m textMemo
	calls := 0
	f := func(s string) parsed { calls++; return parsed{v: s} }
	for i := range memo.DefaultMax + 10 {
		assert.Equal(t, strconv.Itoa(i), m.get(strconv.Itoa(i), f).v)
	}
	assert.Equal(t, int64(memo.DefaultMax), m.Len())
	m.get("0", f)
	assert.Equal(t, memo.DefaultMax+10, calls, "a kept answer is not asked again")
	m.get(strconv.Itoa(memo.DefaultMax+5), f)
	assert.Equal(t, memo.DefaultMax+11, calls, "one not kept is")
}

// TestTextMemoBoundsBytes: a text that would take the memo past its bytes
// is answered, not kept.
func TestTextMemoBoundsBytes(t *testing.T) {
	var m textMemo
	calls := 0
	f := func(s string) parsed { calls++; return parsed{v: len(s)} }
	big := strings.Repeat("x", memo.DefaultMaxBytes/2)
	m.get(big+"1", f)
	m.get(big+"2", f) // one byte past
	m.get(big+"1", f)
	m.get(big+"2", f)
	assert.Equal(t, 3, calls)
	assert.Equal(t, int64(1), m.Len())
}

// TestReferencedIsParsedOnce: the variables of a value, and a parse error,
// are what Flux's parser says, and kept.
func TestReferencedIsParsedOnce(t *testing.T) {
	value := "${referenced_a}-${referenced_b:=x}-$${not}"
	rs, err := referenced(value)
	require.NoError(t, err)
	assert.Equal(t, []ref{{name: "referenced_a"}, {name: "referenced_b", hasDefault: true}}, rs)
	_, kept := parsedRefs.Load(value)
	assert.True(t, kept)
	again, err := referenced(value)
	require.NoError(t, err)
	assert.Same(t, &rs[0], &again[0], "the kept answer")

	_, err = referenced("${referenced.bad}")
	require.Error(t, err)
	_, err2 := referenced("${referenced.bad}")
	assert.Equal(t, err, err2)
}
