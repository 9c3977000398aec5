//go:build !unix

package fleet_test

import "time"

// cpuTime is not measured here; cpuMeter then reports nothing.
func cpuTime() time.Duration { return 0 }
