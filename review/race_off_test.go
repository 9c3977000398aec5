//go:build !race

package review_test

// raceBuild is true in a test binary built with -race, which runs the
// costliest tests on a sample.
const raceBuild = false
