package review

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxpack/fluxpack/lint"
)

// rootPaths rewrites the paths under a side's root in the messages of a
// report to paths relative to the root, as the repository names them: a
// base revision is written to a new temporary folder on every run, and a
// report (a pull-request comment) that names it would change on every
// push. The working tree's root is rewritten too, so that the same
// problem reads the same on both sides.
type rootPaths []string

// newRootPaths returns the rewriter for root: its absolute path and,
// when it differs, the path with symbolic links resolved, the longest
// first.
func newRootPaths(root string) rootPaths {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	out := rootPaths{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}

// rel rewrites every path under the root in s: root/x/y becomes x/y, and
// the root itself ".". A longer name that starts with the root's
// (root-other) is left alone.
func (rp rootPaths) rel(s string) string {
	for _, root := range rp {
		if !strings.Contains(s, root) {
			continue
		}
		var b strings.Builder
		for {
			i := strings.Index(s, root)
			if i < 0 {
				b.WriteString(s)
				break
			}
			rest := s[i+len(root):]
			switch {
			case rest != "" && rest[0] == filepath.Separator:
				b.WriteString(s[:i])
				rest = rest[1:]
			case rest == "" || !nameByte(rest[0]):
				b.WriteString(s[:i] + ".")
			default:
				b.WriteString(s[:i+len(root)])
			}
			s = rest
		}
		s = b.String()
	}
	return s
}

func nameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// findings names the files of a side's findings relative to the side's
// root, as a reviewer and a code-scanning upload know them, and rewrites
// the paths in their messages the same way.
func (rp rootPaths) findings(r *lint.Report) {
	if r == nil || len(rp) == 0 {
		return
	}
	file := func(f string) string {
		if !filepath.IsAbs(filepath.FromSlash(f)) {
			return f
		}
		for _, root := range rp {
			if x, err := filepath.Rel(root, filepath.FromSlash(f)); err == nil && filepath.IsLocal(x) {
				return filepath.ToSlash(x)
			}
		}
		return f
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		f.File = file(f.File)
		f.LayerFile = file(f.LayerFile)
		f.Message = rp.rel(f.Message)
		for j := range f.Places {
			f.Places[j].File = file(f.Places[j].File)
		}
	}
}
