package memo_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/memo"
)

// A Bounded keeps at most Max answers and MaxBytes of keys and values;
// what it does not keep is not found, and what it keeps is found.
func TestBounded(t *testing.T) {
	m := &memo.Bounded[int]{Max: 3}
	for i := range 5 {
		m.Store(strconv.Itoa(i), i, 0)
	}
	assert.EqualValues(t, 3, m.Len(), "bounded by number")
	v, ok := m.Load("2")
	assert.True(t, ok)
	assert.Equal(t, 2, v)
	_, ok = m.Load("3")
	assert.False(t, ok, "one past the bound is not kept")
	m.Store("0", 99, 0)
	v, _ = m.Load("0")
	assert.Equal(t, 0, v, "the first answer kept stays")

	b := &memo.Bounded[string]{MaxBytes: 10}
	b.Store("k", strings.Repeat("x", 5), 5) // 6 bytes
	b.Store("l", strings.Repeat("y", 5), 5) // 12: past
	assert.EqualValues(t, 1, b.Len(), "bounded by bytes")
	assert.EqualValues(t, 6, b.Bytes())

	var d memo.Bounded[int] // zero: the default bounds
	for i := range memo.DefaultMax + 1 {
		d.Store(strconv.Itoa(i), i, 0)
	}
	assert.EqualValues(t, memo.DefaultMax, d.Len())
}
