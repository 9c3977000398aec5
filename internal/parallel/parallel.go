// Package parallel runs the iterations of a loop on every core.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn(0) … fn(n-1) on GOMAXPROCS goroutines (in the caller's
// goroutine when there is one core or one iteration) and returns when
// every call has. The calls must not depend on one another's order.
func For(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	wg.Wait()
}
