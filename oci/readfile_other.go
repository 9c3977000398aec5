//go:build !linux

package oci

// readFile returns the mode and content of path; see readFileOS.
func readFile(path string) fileData { return readFileOS(path) }
