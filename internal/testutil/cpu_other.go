//go:build !unix

package testutil

import "time"

// cpuTime is not measured here; CPUMeter then reports nothing.
func cpuTime() time.Duration { return 0 }
