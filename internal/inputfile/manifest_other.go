//go:build !unix

package inputfile

import "os"

// ReadManifest returns the contents of the file at name: os.ReadFile.
func ReadManifest(name string) ([]byte, error) { return os.ReadFile(name) }
