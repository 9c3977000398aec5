//go:build !unix

package readfile

import "os"

// Read returns the contents of the file at name: os.ReadFile.
func Read(name string) ([]byte, error) { return os.ReadFile(name) }
