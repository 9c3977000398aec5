package testutil

import (
	"testing"
	"time"
)

// CPUMeter starts counting the CPU time of the process (every goroutine)
// and returns the function that reports it per iteration as CPU-ms/op, once
// b.Loop is done: call it after the benchmark's setup. On a machine shared
// with other work the CPU time is steadier than the wall time, and it shows
// work done on other cores that the wall time hides. Where the CPU time
// cannot be read, nothing is reported.
func CPUMeter(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if used := cpuTime() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used)/float64(time.Millisecond)/float64(b.N), "CPU-ms/op")
		}
	}
}
