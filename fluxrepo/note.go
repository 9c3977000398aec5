package fluxrepo

import (
	"fmt"
	"strings"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// NoteKind is the kind of a problem of a tree, named as the lint rule that
// reports it (package lint turns each Note into a finding of that rule).
type NoteKind string

// The kinds of Notes.
const (
	NoteGraph     NoteKind = "graph"     // a Kustomization two parents apply: they fight over it
	NotePath      NoteKind = "path"      // a spec.path Flux does not apply as written
	NoteSource    NoteKind = "source"    // a source the tree declares is broken (an ArtifactGenerator, a ResourceSet's templates)
	NoteVariables NoteKind = "variables" // a Kustomization spec its parent's variables break
)

// NoteKinds are every NoteKind.
func NoteKinds() []NoteKind { return []NoteKind{NoteGraph, NotePath, NoteSource, NoteVariables} }

// Note is a problem of the tree that is not any one layer's, at the object
// concerned. Every Note is an error: Flux fails on it.
type Note struct {
	Kind    NoteKind
	Object  string // Kind/namespace/name
	File    string // relative to the repository's root
	Line    int    // 1-based, 0 when unknown
	Message string
}

// String is the note as lint prints a finding: file:line: object: message [kind].
func (n Note) String() string {
	var b strings.Builder
	if n.File != "" {
		b.WriteString(errdefs.Place(n.File, n.Line) + ": ")
	}
	if n.Object != "" {
		b.WriteString(n.Object + ": ")
	}
	fmt.Fprintf(&b, "%s [%s]", n.Message, n.Kind)
	return b.String()
}
