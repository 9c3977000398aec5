package oci_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{benchDir, benchBinDir} {
		if dir != "" {
			os.RemoveAll(dir) // made by the benchmarks
		}
	}
	os.Exit(code)
}
