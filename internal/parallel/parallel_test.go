package parallel_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/internal/parallel"
)

func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, 2, 100} {
		var calls atomic.Int64
		seen := make([]atomic.Int64, n)
		parallel.For(n, func(i int) {
			calls.Add(1)
			seen[i].Add(1)
		})
		assert.Equal(t, int64(n), calls.Load(), "For(%d) calls", n)
		for i := range seen {
			assert.Equal(t, int64(1), seen[i].Load(), "For(%d) calls fn(%d) once", n, i)
		}
	}
}
