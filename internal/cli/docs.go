package cli

import (
	"os"

	"github.com/spf13/cobra/doc"
)

// WriteDocs writes the Markdown reference of every command into dir.
func WriteDocs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := NewRoot("")
	root.DisableAutoGenTag = true
	return doc.GenMarkdownTree(root, dir)
}
